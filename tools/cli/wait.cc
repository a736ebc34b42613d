// Waiting for a long-running command to end (tools/cli/wait.h).
#include "tools/cli/wait.h"

#include <csignal>

namespace siomq::cli {
namespace {

volatile std::sig_atomic_t g_interrupted = 0;

extern "C" void on_signal(int) { g_interrupted = 1; }

}  // namespace

Waiter::Waiter() {
  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);
}

void Waiter::done(int code) {
  {
    std::lock_guard lock(mu_);
    if (done_) return;
    done_ = true;
    code_ = code;
  }
  cv_.notify_all();
}

Waiter::End Waiter::wait(std::optional<std::chrono::milliseconds> timeout) {
  using Clock = std::chrono::steady_clock;
  auto deadline = timeout ? Clock::now() + *timeout : Clock::time_point::max();
  std::unique_lock lock(mu_);
  // A signal handler cannot notify a condition variable: look at its flag every 50 ms.
  while (!done_) {
    if (g_interrupted) return End::interrupted;
    auto now = Clock::now();
    if (now >= deadline) return End::timeout;
    cv_.wait_for(lock, std::min<Clock::duration>(deadline - now, std::chrono::milliseconds(50)));
  }
  return End::done;
}

int Waiter::code() const {
  std::lock_guard lock(mu_);
  return code_;
}

}  // namespace siomq::cli
