#include "store/writer.h"

#include <spdlog/spdlog.h>

#include <iterator>

#include "wire/thread_role.h"

namespace siomq::store {

std::optional<SyncMode> parse_sync_mode(std::string_view text) {
  if (text == "always") return SyncMode::always;
  if (text == "batch") return SyncMode::batch;
  if (text == "never") return SyncMode::never;
  return std::nullopt;
}

Writer::Writer(Backend& backend, SyncMode mode, std::chrono::microseconds window, WriteObserver on_write)
    : backend_(&backend), mode_(mode), window_(window), on_write_(std::move(on_write)), thread_([this] {
        become_background_thread("siomq-writer");
        run();
      }) {}

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

void Writer::switch_to(Backend& next, std::vector<Op> contents, Done done) {
  {
    std::lock_guard lock(mu_);
    if (!stopping_) {
      pending_.push_back(Pending{std::move(contents), std::move(done), &next});
      if (pending_.size() == 1) cv_.notify_one();
      return;
    }
  }
  if (done) done(make_error("the store is shutting down", 503));
}

Backend& Writer::backend() const {
  std::lock_guard lock(mu_);
  return *backend_;
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
          Backend* b = backend_;
          lock.unlock();
          b->maintain();
          lock.lock();
        }
      }
      if (pending_.empty() && stopping_) return;
      // Group commit: give concurrent submitters a short window to join this write, unless a write
      // just finished (then the queue already holds whatever arrived during it).
      if (mode_ == SyncMode::batch && !stopping_ && Clock::now() - last_write > window_)
        cv_.wait_for(lock, window_, [this] { return stopping_; });
      // A switch is written alone; a group ends before the next switch.
      if (mode_ == SyncMode::always || pending_.front().switch_to) {
        group.push_back(std::move(pending_.front()));
        pending_.pop_front();
      } else {
        while (!pending_.empty() && !pending_.front().switch_to) {
          group.push_back(std::move(pending_.front()));
          pending_.pop_front();
        }
      }
    }
    if (group.size() == 1 && group.front().switch_to) {
      Pending& sw = group.front();
      Status status = sw.switch_to->write(sw.ops, true);
      if (status) {
        spdlog::info("store: {} -> {} ({} records copied)", backend_->name(), sw.switch_to->name(), sw.ops.size());
        std::lock_guard lock(mu_);
        backend_ = sw.switch_to;
      } else {
        spdlog::error("store: cannot move to {}: {}", sw.switch_to->name(), status.error().message);
      }
      if (sw.done) sw.done(status);
      group.clear();
      last_write = Clock::now();
      continue;
    }
    ops.clear();
    for (auto& p : group) {
      for (auto& op : p.ops) ops.push_back(std::move(op));
    }
    Status status = Ok{};
    if (!ops.empty()) {
      auto began = Clock::now();
      status = backend_->write(ops, mode_ != SyncMode::never);
      if (on_write_) on_write_(Clock::now() - began, ops.size());
    }
    if (!status) spdlog::error("store ({}): write of {} changes failed: {}", backend_->name(), ops.size(), status.error().message);
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
