#include "store/writer.h"

#include <spdlog/spdlog.h>

#include <iterator>

namespace siomq::store {

std::optional<SyncMode> parse_sync_mode(std::string_view text) {
  if (text == "always") return SyncMode::always;
  if (text == "batch") return SyncMode::batch;
  if (text == "never") return SyncMode::never;
  return std::nullopt;
}

Writer::Writer(Backend& backend, SyncMode mode, std::chrono::microseconds window)
    : backend_(backend), mode_(mode), window_(window), thread_([this] { run(); }) {}

Writer::~Writer() { stop(); }

void Writer::submit(std::vector<Op> ops, Done done) {
  {
    std::lock_guard lock(mu_);
    if (!stopping_) {
      pending_.push_back(Pending{std::move(ops), std::move(done)});
      if (pending_.size() == 1) cv_.notify_one();
      return;
    }
  }
  if (done) done(make_error("the store is shutting down", 503));
}

void Writer::stop() {
  {
    std::lock_guard lock(mu_);
    if (stopping_ && !thread_.joinable()) return;
    stopping_ = true;
  }
  cv_.notify_one();
  if (thread_.joinable()) thread_.join();
}

WriterStats Writer::stats() const {
  std::lock_guard lock(mu_);
  return stats_;
}

void Writer::run() {
  using Clock = std::chrono::steady_clock;
  std::vector<Pending> group;
  std::vector<Op> ops;
  auto last_write = Clock::now();
  for (;;) {
    {
      std::unique_lock lock(mu_);
      // Idle: wake up now and then for the backend's housekeeping.
      while (pending_.empty() && !stopping_) {
        if (cv_.wait_for(lock, std::chrono::seconds(1)) == std::cv_status::timeout && pending_.empty()) {
          lock.unlock();
          backend_.maintain();
          lock.lock();
        }
      }
      if (pending_.empty() && stopping_) return;
      // Group commit: give concurrent submitters a short window to join this write, unless a write
      // just finished (then the queue already holds whatever arrived during it).
      if (mode_ == SyncMode::batch && !stopping_ && Clock::now() - last_write > window_)
        cv_.wait_for(lock, window_, [this] { return stopping_; });
      if (mode_ == SyncMode::always) {
        group.push_back(std::move(pending_.front()));
        pending_.pop_front();
      } else {
        std::move(pending_.begin(), pending_.end(), std::back_inserter(group));
        pending_.clear();
      }
    }
    ops.clear();
    for (auto& p : group) {
      for (auto& op : p.ops) ops.push_back(std::move(op));
    }
    Status status = Ok{};
    if (!ops.empty()) status = backend_.write(ops, mode_ != SyncMode::never);
    if (!status) spdlog::error("store ({}): write of {} changes failed: {}", backend_.name(), ops.size(), status.error().message);
    {
      std::lock_guard lock(mu_);
      ++stats_.writes;
      stats_.ops += ops.size();
      if (!status) ++stats_.failures;
    }
    for (auto& p : group) {
      if (p.done) p.done(status);
    }
    group.clear();
    last_write = Clock::now();
  }
}

}  // namespace siomq::store
