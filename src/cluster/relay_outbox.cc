#include "cluster/relay_outbox.h"

#include <utility>

namespace siomq::cluster {

RelayOutbox::Pushed RelayOutbox::push(std::vector<Outgoing> outs) {
  size_t bytes = 0;
  for (const auto& o : outs) bytes += o.text.size();
  std::lock_guard lock(mu_);
  if (waiting_.size() + outs.size() > kMaxEntries || bytes_ + bytes > kMaxBytes) return Pushed::refused;
  bytes_ += bytes;
  for (auto& o : outs) waiting_.push_back(std::move(o));
  entries_.store(waiting_.size(), std::memory_order_relaxed);
  if (wake_posted_) return Pushed::queued;
  wake_posted_ = true;
  return Pushed::queued_wake;
}

std::vector<Outgoing> RelayOutbox::take() {
  std::vector<Outgoing> out;
  std::lock_guard lock(mu_);
  out.swap(waiting_);
  bytes_ = 0;
  entries_.store(0, std::memory_order_relaxed);
  wake_posted_ = false;
  return out;
}

size_t RelayOutbox::clear() {
  std::lock_guard lock(mu_);
  size_t n = waiting_.size();
  waiting_.clear();
  bytes_ = 0;
  entries_.store(0, std::memory_order_relaxed);
  return n;
}

}  // namespace siomq::cluster
