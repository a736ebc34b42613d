// A bus message relayed between siomq nodes (docs/scale-out.md "The bus across nodes"), on the
// receiving node's own channel <c>:node:<id> beside tyo-mq's relayed messages (reference nodes never
// read those channels):
//   {"bus":{"realm":R,"subject":S,"reply":S2,"header":{…},"data":"<base64>","queues":[[pattern,queue],…]},
//    "node_id":N}
// `reply`, `header` and `queues` are left out when empty. `queues` names the queue groups whose turn the
// publishing node gave the receiver: it hands the message to one of its members of each, and to no
// other group's members.
//
// The decoder takes text from Redis as hostile input: bounded, validated whole (iterative, depth and
// UTF-8 checked), each field type-checked, subjects checked as a publish checks them. Pure; any thread.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "broker/bus_message.h"
#include "wire/result.h"

namespace siomq::cluster {

struct BusRelayed {
  std::string node_id, realm;
  broker::BusMessage message;  // subject, reply, header (a JSON object's text, or empty) and data
  std::vector<std::pair<std::string, std::string>> queues;  // (pattern, queue)
};

// The most queue groups one relayed message names.
inline constexpr size_t kMaxRelayedQueues = 1024;

std::string encode_bus_relay(std::string_view node_id, std::string_view realm, const broker::BusMessage& m,
                             const std::vector<std::pair<std::string, std::string>>& queues);
// Whether `text` is shaped as a bus relay (it starts so); decode_bus_relay says whether it is one.
bool is_bus_relay(std::string_view text);
Result<BusRelayed> decode_bus_relay(std::string_view text, size_t max_bytes);

}  // namespace siomq::cluster
