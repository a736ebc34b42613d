// What the durable queues tell an observer (the server's metrics) about the copies they handle, per realm.
// Called on the queues threads (one per shard, so from several at once), once per event; an implementation must be cheap and must not call back
// into the queues. The observer is given in QueueOptions and must outlive the DurableQueues.
#pragma once

#include <string_view>

namespace siomq::broker {

class QueueObserver {
 public:
  virtual ~QueueObserver() = default;
  // A copy was handed to the store (a PRODUCE's copy for a durable queue, or a DLQ replay).
  virtual void stored(std::string_view realm) = 0;
  // A copy of a durable queue went to its consumer (`key`: its subscription key): a live pass-through, a
  // replay or a retry — each attempt counts.
  virtual void sent(std::string_view realm, std::string_view key) = 0;
  // An ACK-mode copy was not acknowledged in time.
  virtual void ack_timed_out(std::string_view realm) = 0;
  // A copy went to the dead-letter queue.
  virtual void dead_lettered(std::string_view realm) = 0;
};

}  // namespace siomq::broker
