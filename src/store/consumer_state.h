// The consumer state family: where a bus consumer of a stream stands, one record per (stream,
// consumer). Written when the cursor, the ack floor or the pending set changes; the bus rebuilds its
// consumers from these and the stream log at load.
//
// Key: the stream name, a NUL byte, the consumer name (the redis field is the same bytes); load()
// returns the states in (stream, consumer) order. The stream name holds no NUL byte (the bus's names
// never do): the key would otherwise not name one consumer.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "store/op.h"
#include "wire/result.h"

namespace siomq::store {

// A message delivered and not yet acknowledged.
struct PendingDelivery {
  uint64_t stream_seq = 0;
  uint64_t deliveries = 0;        // how many times it was sent, at least 1
  int64_t last_delivered_ms = 0;  // Unix ms, the base of its ack deadline
  friend bool operator==(const PendingDelivery&, const PendingDelivery&) = default;
};

struct ConsumerState {
  std::string stream;
  std::string consumer;
  uint64_t delivered = 0;  // the cursor: the last stream seq delivered (0: none yet)
  uint64_t ack_floor = 0;  // every stream seq up to it is acknowledged; at most `delivered`
  // In stream seq order, each above the ack floor and at most `delivered`.
  std::vector<PendingDelivery> pending;
  std::string config;  // the consumer's settings, a JSON object as text (the bus's format)
};

// One JSON object: {"stream","consumer","delivered","ack_floor","pending","config"}, `pending` as an
// array of [stream_seq, deliveries, last_delivered_ms] triples, `config` spliced raw. Decoding refuses a
// state whose numbers break the order above.
std::string encode_consumer_state(const ConsumerState& state);
Result<ConsumerState> decode_consumer_state(std::string_view text);

std::string consumer_state_key(std::string_view stream, std::string_view consumer);

Op put(const ConsumerState& state);
Op erase_consumer_state(std::string_view stream, std::string_view consumer);

}  // namespace siomq::store
