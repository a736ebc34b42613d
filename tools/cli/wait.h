// How a long-running command (sub, reply, auth request --wait) waits on the main thread while its
// handlers run on the client's io thread: until a handler says it is done, the timeout passes, or
// SIGINT/SIGTERM arrives.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>

namespace siomq::cli {

class Waiter {
 public:
  enum class End { done, timeout, interrupted };

  Waiter();  // catches SIGINT and SIGTERM from now on
  // From any thread: ends wait() with End::done and `code`. The first call counts.
  void done(int code);
  End wait(std::optional<std::chrono::milliseconds> timeout);
  int code() const;

 private:
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
  int code_ = 0;
};

}  // namespace siomq::cli
