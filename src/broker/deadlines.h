// Deadlines: many timed events on one io_context served by one steady_timer, armed for the earliest.
// The durable queues' ACK deadlines and retries, and the stream consumers' ack waits, backoffs and
// delayed naks all run on it, so the engine has one timer machinery.
//
// A key is scheduled at most once: schedule() replaces its earlier time, cancel() forgets it. Due keys are
// handed to `on_due` in time order (ties by key), one call each, after the key has left the set, so the
// callback may schedule it again.
//
// How: each key's time in a hash map, and a binary heap of (time, key) items for the earliest. A cancel or
// a new time leaves the key's old item in the heap, stale: it is skipped when it comes to the top, and the
// heap is rebuilt from the map once stale items outnumber the live ones, so it never holds more than
// about twice the keys scheduled. A schedule is one hash insertion and a push onto a vector (no tree node
// per key, as a set and a map took: two allocations per ACK deadline on the durable hot path); a cancel
// is one hash erasure. Amortized O(log n) per schedule, O(1) per cancel.
//
// Threading: used only on the io_context's thread. The object must outlive the io_context's run (its
// timer's handler refers to it); destroy it after the thread has stopped.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <unordered_map>
#include <utility>
#include <vector>

namespace siomq::broker {

// Keys are the engine's own numbers and pointers (never client text), so a plain mix is enough.
struct DeadlineKeyHash {
  template <class T>
  size_t operator()(const T& key) const {
    return std::hash<T>{}(key);
  }
  template <class A, class B>
  size_t operator()(const std::pair<A, B>& key) const {
    return std::hash<A>{}(key.first) * 0x9E3779B97F4A7C15ULL ^ std::hash<B>{}(key.second);
  }
};

template <class Key>
class Deadlines {
 public:
  using Clock = std::chrono::steady_clock;

  Deadlines(boost::asio::io_context& io, std::function<void(Key)> on_due) : timer_(io), on_due_(std::move(on_due)) {}

  void schedule(Key key, Clock::time_point at) {
    auto [it, fresh] = when_.try_emplace(key, at);
    if (!fresh) {
      if (it->second == at) return;  // its item in the heap stands
      it->second = at;
    }
    push(Item{at, key});
    if (!armed_ || at < *armed_) arm(at);
  }
  void schedule_after(Key key, std::chrono::milliseconds after) { schedule(key, Clock::now() + after); }
  void cancel(Key key) { when_.erase(key); }
  bool scheduled(Key key) const { return when_.count(key) != 0; }
  std::optional<Clock::time_point> when(Key key) const {
    auto it = when_.find(key);
    return it == when_.end() ? std::nullopt : std::optional<Clock::time_point>(it->second);
  }
  size_t size() const { return when_.size(); }
  // Items in the heap, stale ones included (for the tests of its bound).
  size_t held() const { return heap_.size(); }

 private:
  struct Item {
    Clock::time_point at;
    Key key;
  };
  // The heap's order: the earliest on top, ties by key.
  static bool later(const Item& a, const Item& b) {
    if (a.at != b.at) return a.at > b.at;
    return std::less<Key>{}(b.key, a.key);
  }
  // Whether an item is the key's current time (not cancelled or moved since it was pushed).
  bool live(const Item& item) const {
    auto it = when_.find(item.key);
    return it != when_.end() && it->second == item.at;
  }
  void push(Item item) {
    heap_.push_back(std::move(item));
    std::push_heap(heap_.begin(), heap_.end(), later);
    if (heap_.size() > 2 * when_.size() + 64) rebuild();
  }
  void pop() {
    std::pop_heap(heap_.begin(), heap_.end(), later);
    heap_.pop_back();
  }
  // Drops every stale item: the heap made again from the keys' times.
  void rebuild() {
    heap_.clear();
    for (const auto& [key, at] : when_) heap_.push_back(Item{at, key});
    std::make_heap(heap_.begin(), heap_.end(), later);
  }
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
    while (!heap_.empty() && heap_.front().at <= now) {
      Item item = heap_.front();
      pop();
      auto it = when_.find(item.key);
      if (it == when_.end() || it->second != item.at) continue;  // stale
      when_.erase(it);
      on_due_(item.key);
    }
    while (!heap_.empty() && !live(heap_.front())) pop();
    if (!heap_.empty() && (!armed_ || heap_.front().at < *armed_)) arm(heap_.front().at);
  }

  boost::asio::steady_timer timer_;
  std::function<void(Key)> on_due_;
  std::vector<Item> heap_;
  std::unordered_map<Key, Clock::time_point, DeadlineKeyHash> when_;
  std::optional<Clock::time_point> armed_;
};

}  // namespace siomq::broker
