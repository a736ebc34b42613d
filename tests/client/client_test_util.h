// Helpers shared by the client library's tests: waiting for a condition, and a one-shot value a
// handler on the io thread hands to the test's thread.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "siomq/result.h"

namespace siomq::test {

// Polls `cond` until it holds or `timeout` passes; the value of `cond` at the end.
inline bool eventually(const std::function<bool()>& cond, std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (cond()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return cond();
}

// The error code of a result, 0 when it succeeded (so that a check fails instead of throwing).
template <class T>
int code_of(const Result<T>& r) {
  return r.ok() ? 0 : r.error().code;
}

// Values pushed by handlers (any thread), read by the test.
template <class T>
class Inbox {
 public:
  void push(T v) {
    std::lock_guard lock(mu_);
    items_.push_back(std::move(v));
    cv_.notify_all();
  }
  // Waits until at least `n` items arrived; false on timeout.
  bool wait_for(size_t n, std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, timeout, [&] { return items_.size() >= n; });
  }
  std::vector<T> items() {
    std::lock_guard lock(mu_);
    return items_;
  }
  size_t size() {
    std::lock_guard lock(mu_);
    return items_.size();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<T> items_;
};

}  // namespace siomq::test
