#include "net/write_latency.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <vector>

namespace siomq::net {
namespace {

constexpr size_t kBuckets = kWriteLatencyBoundsUs.size() + 1;

// One thread's counts. Only its thread writes them (a load and a store, not a locked add); a scrape
// reads them with relaxed loads, so a count may trail by the frames being recorded at that moment.
struct ThreadCounts {
  std::array<std::atomic<uint64_t>, kBuckets> buckets{};
  std::atomic<uint64_t> sum_us{0};
};

// The live threads' counts, and what the threads that ended had counted.
struct Registry {
  std::mutex mu;
  std::vector<ThreadCounts*> live;
  WriteLatency retired;
};

Registry& registry() {
  static Registry* r = new Registry;  // never destroyed: threads may end after static destruction begins
  return *r;
}

void add(WriteLatency& into, const ThreadCounts& c) {
  for (size_t i = 0; i < kBuckets; ++i) {
    uint64_t n = c.buckets[i].load(std::memory_order_relaxed);
    into.buckets[i] += n;
    into.count += n;
  }
  into.sum_us += c.sum_us.load(std::memory_order_relaxed);
}

// Registered on the thread's first record, folded into `retired` when the thread ends.
struct ThreadSlot {
  ThreadCounts counts;
  ThreadSlot() {
    std::lock_guard lock(registry().mu);
    registry().live.push_back(&counts);
  }
  ~ThreadSlot() {
    Registry& r = registry();
    std::lock_guard lock(r.mu);
    std::erase(r.live, &counts);
    add(r.retired, counts);
  }
};

void bump(std::atomic<uint64_t>& a, uint64_t by) { a.store(a.load(std::memory_order_relaxed) + by, std::memory_order_relaxed); }

}  // namespace

uint32_t stamp_now_us() {
  auto us = std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now().time_since_epoch());
  auto v = static_cast<uint32_t>(us.count());
  return v == 0 ? 1 : v;
}

void record_write(uint32_t stamp, uint32_t now_us) {
  if (stamp == 0) return;
  thread_local ThreadSlot slot;
  const uint32_t took = now_us - stamp;  // modulo 2^32: right across the wrap
  const size_t i = static_cast<size_t>(
      std::lower_bound(kWriteLatencyBoundsUs.begin(), kWriteLatencyBoundsUs.end(), took) - kWriteLatencyBoundsUs.begin());
  bump(slot.counts.buckets[i], 1);
  bump(slot.counts.sum_us, took);
}

WriteLatency write_latency() {
  Registry& r = registry();
  std::lock_guard lock(r.mu);
  WriteLatency total = r.retired;
  for (const ThreadCounts* c : r.live) add(total, *c);
  return total;
}

}  // namespace siomq::net
