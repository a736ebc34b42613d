// Deadlines: many timed events on one io_context served by one steady_timer, armed for the earliest.
// The durable queues' ACK deadlines and retries, and the stream consumers' ack waits, backoffs and
// delayed naks all run on it, so the engine has one timer machinery.
//
// A key is scheduled at most once: schedule() replaces its earlier time, cancel() forgets it. Due keys are
// handed to `on_due` in time order (ties by key), one call each, after the key has left the set, so the
// callback may schedule it again. Cost: O(log n) per schedule/cancel, one timer wait for the earliest.
//
// Threading: used only on the io_context's thread. The object must outlive the io_context's run (its
// timer's handler refers to it); destroy it after the thread has stopped.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <utility>

namespace siomq::broker {

template <class Key>
class Deadlines {
 public:
  using Clock = std::chrono::steady_clock;

  Deadlines(boost::asio::io_context& io, std::function<void(Key)> on_due) : timer_(io), on_due_(std::move(on_due)) {}

  void schedule(Key key, Clock::time_point at) {
    cancel(key);
    due_.emplace(at, key);
    when_.emplace(key, at);
    if (!armed_ || at < *armed_) arm(at);
  }
  void schedule_after(Key key, std::chrono::milliseconds after) { schedule(key, Clock::now() + after); }
  void cancel(Key key) {
    auto it = when_.find(key);
    if (it == when_.end()) return;
    due_.erase({it->second, key});
    when_.erase(it);
  }
  bool scheduled(Key key) const { return when_.count(key) != 0; }
  std::optional<Clock::time_point> when(Key key) const {
    auto it = when_.find(key);
    return it == when_.end() ? std::nullopt : std::optional<Clock::time_point>(it->second);
  }
  size_t size() const { return when_.size(); }

 private:
  void arm(Clock::time_point at) {
    armed_ = at;
    timer_.expires_at(at);
    timer_.async_wait([this](const boost::system::error_code& ec) {
      if (ec) return;
      armed_.reset();
      fire();
    });
  }
  void fire() {
    auto now = Clock::now();
    while (!due_.empty() && due_.begin()->first <= now) {
      Key key = due_.begin()->second;
      due_.erase(due_.begin());
      when_.erase(key);
      on_due_(key);
    }
    if (!due_.empty() && (!armed_ || due_.begin()->first < *armed_)) arm(due_.begin()->first);
  }

  boost::asio::steady_timer timer_;
  std::function<void(Key)> on_due_;
  std::set<std::pair<Clock::time_point, Key>> due_;
  std::map<Key, Clock::time_point> when_;
  std::optional<Clock::time_point> armed_;
};

}  // namespace siomq::broker
