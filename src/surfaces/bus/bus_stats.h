// The bus's cumulative counters for `stats` (bus.md §5 StatsSnapshot, §8.20): messages and bytes in
// (published) and out (delivered), and connections. One set per process; relaxed atomics, any thread.
#pragma once

#include <atomic>
#include <cstdint>

namespace siomq::surfaces::bus {

struct BusStats {
  std::atomic<uint64_t> in_msgs{0}, in_bytes{0}, out_msgs{0}, out_bytes{0};
  std::atomic<uint64_t> connections{0}, total_connections{0};

  void count_in(uint64_t bytes) {
    in_msgs.fetch_add(1, std::memory_order_relaxed);
    in_bytes.fetch_add(bytes, std::memory_order_relaxed);
  }
  void count_out(uint64_t bytes) {
    out_msgs.fetch_add(1, std::memory_order_relaxed);
    out_bytes.fetch_add(bytes, std::memory_order_relaxed);
  }
};

BusStats& bus_stats();
// The process's resident memory in bytes (/proc/self/statm; 0 when unreadable).
uint64_t rss_bytes();

}  // namespace siomq::surfaces::bus
