// The relay's outbox: messages produced (or published) on the workers, waiting for the cluster thread to
// send them to Redis (docs/scale-out.md "Faults": bounded memory while Redis is slow or gone).
//
// Bounded in entries and bytes: past either, a push is refused whole (all of a message's texts or none)
// and the caller's own members keep what they can. The first push after a take() asks the caller to
// wake the cluster thread, so a burst costs one wake-up. Any thread (one mutex, nothing done under it but
// moving entries); entries() is lock-free, for the workers' "backed up" check.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "broker/remote_groups.h"
#include "wire/result.h"

namespace siomq::cluster {

// A produced message (or a bus text) waiting for the cluster thread.
struct Outgoing {
  std::string realm, producer, event;
  bool broadcast = false;
  std::string text;  // the §10 envelope, or a bus text
  std::vector<broker::RemoteGroupPick> picks;
  std::string channel;   // a bus text's: its node's channel
  bool counted = false;  // a bus text: the first of its message (relayed_out counts messages)
  uint64_t confirm = 0;  // a produced message whose publisher waits: the receivers answer (relay_confirms.h)
  std::function<void(size_t stored, const Status& status)> confirmed;
};

class RelayOutbox {
 public:
  static constexpr size_t kMaxEntries = 100'000;
  static constexpr size_t kMaxBytes = size_t{64} << 20;

  enum class Pushed { refused, queued, queued_wake };
  Pushed push(std::vector<Outgoing> outs);
  // Everything waiting, oldest first; the next push wakes again.
  std::vector<Outgoing> take();
  // Drops everything waiting (an outage); returns how many.
  size_t clear();
  size_t entries() const { return entries_.load(std::memory_order_relaxed); }

 private:
  std::mutex mu_;
  std::vector<Outgoing> waiting_;
  size_t bytes_ = 0;
  bool wake_posted_ = false;
  std::atomic<size_t> entries_{0};
};

}  // namespace siomq::cluster
