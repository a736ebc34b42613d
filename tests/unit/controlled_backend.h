// A store backend for tests of what the engine does when the store does not keep up: it writes (and
// keeps nothing), fails every write, or holds each write until the test lets it go.
#pragma once

#include <condition_variable>
#include <mutex>
#include <vector>

#include "store/backend.h"

namespace siomq::test_support {

class ControlledBackend : public store::Backend {
 public:
  enum class Mode { ok, fail, hold };
  explicit ControlledBackend(Mode mode = Mode::ok) : mode_(mode) {}
  const char* name() const override { return "controlled"; }
  Contents load() override { return {}; }
  Status write(const std::vector<store::Op>&, bool) override {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [&] { return mode_ != Mode::hold; });
    if (mode_ == Mode::fail) return make_error("disk full");
    return Ok{};
  }
  void set(Mode m) {
    std::lock_guard lock(mu_);
    mode_ = m;
    cv_.notify_all();
  }
  void release() { set(Mode::ok); }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  Mode mode_;
};

}  // namespace siomq::test_support
