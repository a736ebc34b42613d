// A bus message (bus.md §4) as the engine routes it, and the sink a core subscription delivers to.
//
// A message is immutable once published and shared (shared_ptr) by every copy of a fan-out: its data
// bytes are held once however many subscribers get it. The surface that owns a sink shapes the copy on
// its wire (the bus socket: a `msg` event with the data as a binary attachment).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace siomq::broker {

// Where a message delivered by a stream consumer comes from (push consumers, §4 `msg`).
struct StreamOrigin {
  std::string stream, consumer;
  uint64_t seq = 0;        // the stream sequence
  uint64_t delivered = 0;  // deliveries of this message to this consumer, from 1
  int64_t timestamp_ms = 0;
};

struct BusMessage {
  std::string subject;
  std::string reply;   // empty: none
  std::string header;  // a JSON object of string values as text; empty: none
  std::string data;    // the bytes
  std::optional<StreamOrigin> origin;
  int64_t timestamp_ms = 0;  // stream messages: when the stream stored it

  size_t size() const { return subject.size() + reply.size() + header.size() + data.size(); }
};
using BusMessagePtr = std::shared_ptr<const BusMessage>;

// What a core subscription delivers to. deliver() is called under the realm's lock, from any thread
// (the publisher's worker, the streams' thread): it only hands the copy to the sink's own thread.
class BusSink {
 public:
  virtual ~BusSink() = default;
  // One copy for the subscription `sid`; `last`: the subscription's `max` is reached and it is gone.
  virtual void deliver(const BusMessagePtr& message, std::string_view sid, bool last) = 0;
};
using BusSinkPtr = std::shared_ptr<BusSink>;

}  // namespace siomq::broker
