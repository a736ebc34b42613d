// How many client TCP connections the process holds — HTTP (polling, handshakes) and WebSocket — for the
// server-wide connection cap (TransportOptions::max_connections). An object that owns a client socket
// holds a ConnectionCount; a connection changing hands (moving to another worker, upgrading to a
// WebSocket) counts twice for a moment, which errs on the side of refusing. Thread-safe.
#pragma once

#include <atomic>
#include <cstddef>

namespace siomq::net {

class ConnectionCount {
 public:
  // `adopt`: the count was taken already, by reserve() (the listener counts a connection when it accepts
  // it, before the object that holds the count exists on its worker; counting it again there would
  // refuse a connection under the cap for a moment).
  explicit ConnectionCount(bool adopt = false) {
    if (!adopt) open_.fetch_add(1, std::memory_order_relaxed);
  }
  static void reserve() { open_.fetch_add(1, std::memory_order_relaxed); }
  static void unreserve() { open_.fetch_sub(1, std::memory_order_relaxed); }
  ~ConnectionCount() { open_.fetch_sub(1, std::memory_order_relaxed); }
  ConnectionCount(const ConnectionCount&) = delete;
  ConnectionCount& operator=(const ConnectionCount&) = delete;

  static size_t now() { return open_.load(std::memory_order_relaxed); }

 private:
  static inline std::atomic<size_t> open_{0};
};

}  // namespace siomq::net
