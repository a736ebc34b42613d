// Bytes that connections hold for inbound messages still arriving (a WebSocket frame, or a fragmented
// message, in progress), for the whole process. Each connection's share is bounded by max_payload; this
// bounds their sum: past TransportOptions::max_inbound_bytes a connection holding such bytes stops
// reading, so TCP pushes back on its sender, until the total falls again (see WebSocketConnection).
// Thread-safe: an InboundBudget is one holder's share, touched on its connection's thread; the total is
// atomic.
#pragma once

#include <atomic>
#include <cstddef>

namespace siomq::net {

class InboundBudget {
 public:
  InboundBudget() = default;
  ~InboundBudget() { set(0); }
  InboundBudget(const InboundBudget&) = delete;
  InboundBudget& operator=(const InboundBudget&) = delete;

  // This holder's bytes are `bytes` now. (Unsigned wrap-around makes the difference right either way.)
  void set(size_t bytes) {
    if (bytes != held_) total_.fetch_add(bytes - held_, std::memory_order_relaxed);
    held_ = bytes;
  }
  size_t held() const { return held_; }

  static size_t total() { return total_.load(std::memory_order_relaxed); }
  static bool over() {
    size_t limit = limit_.load(std::memory_order_relaxed);
    return limit && total() > limit;
  }
  // 0: unlimited. Set once at start-up.
  static void set_limit(size_t bytes) { limit_.store(bytes, std::memory_order_relaxed); }

 private:
  size_t held_ = 0;
  static inline std::atomic<size_t> total_{0};
  static inline std::atomic<size_t> limit_{0};
};

}  // namespace siomq::net
