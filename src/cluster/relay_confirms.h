// Publisher confirms that cover the copies other nodes store (docs/scale-out.md "Durable queues across
// nodes"): a PRODUCE with a confirm, relayed to other nodes, is confirmed once every node it was sent to
// has answered how many copies it stored (cluster/relay_message.h, RelayAnswer), or with an error when one
// has not within the wait (that node may be dead, or slow: its copies may be stored all the same).
//
// Bounded: at most kMaxWaiting confirms wait at once (past it a confirm is answered 503 at once, and the
// message is relayed all the same). Threading: the cluster thread only; `done` runs there.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "cluster/relay_message.h"
#include "wire/result.h"

namespace siomq::cluster {

class RelayConfirms {
 public:
  using Done = std::function<void(size_t stored, const Status& status)>;
  using Clock = std::chrono::steady_clock;
  static constexpr size_t kMaxWaiting = 100'000;

  explicit RelayConfirms(std::chrono::milliseconds wait) : wait_(wait) {}

  // The message `confirm` went to `nodes`: `done` once each has answered (at once when there are none).
  void expect(uint64_t confirm, std::set<std::string> nodes, Done done, Clock::time_point now);
  // An answer read from this node's channel; one from a node not waited for (late, repeated) is ignored.
  void answer(const RelayAnswer& a);
  // Confirms past their wait answered 504, naming the nodes that did not answer; returns how many.
  size_t expire(Clock::time_point now);
  // Every waiting confirm answered with `why` (Redis is gone: no answer can come).
  void fail_all(const Error& why);
  // When the oldest waiting confirm expires; nullopt when none waits.
  std::optional<Clock::time_point> next_deadline() const;
  size_t waiting() const { return waiting_.size(); }

 private:
  struct Waiting {
    std::set<std::string> nodes;  // not answered yet
    size_t stored = 0;
    Status status = Ok{};
    Done done;
    Clock::time_point deadline;
  };
  std::chrono::milliseconds wait_;
  // By token: tokens grow with time and the wait is one for all, so the first one expires first.
  std::map<uint64_t, Waiting> waiting_;
};

}  // namespace siomq::cluster
