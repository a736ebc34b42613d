// The two clocks the server reads, in milliseconds: wall time (what a client or the store sees: message
// times, expiry dates, proof windows) and a monotonic time (what a rate, an idle period or a deadline is
// measured by, unaffected by the wall clock being set). Thread-safe; no state.
#pragma once

#include <chrono>
#include <cstdint>

namespace siomq {

// Milliseconds since the Unix epoch (system_clock).
inline int64_t unix_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// Milliseconds of steady_clock: only differences between two readings mean anything.
inline int64_t steady_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace siomq
