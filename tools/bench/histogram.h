// A latency histogram for the load generator: log-linear buckets (1/64 of a power of two wide, so
// about 1.6% precision) from 1 µs to an hour, constant memory, cheap to record, exact counts.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

namespace siomq::bench {

class Histogram {
 public:
  void record(int64_t nanoseconds);
  uint64_t count() const { return count_; }
  // The value at quantile q (0..1), in nanoseconds: the upper edge of the bucket holding it.
  int64_t quantile(double q) const;
  int64_t max() const { return max_; }
  double mean() const { return count_ ? static_cast<double>(sum_) / static_cast<double>(count_) : 0; }

 private:
  static constexpr int kSubBits = 6;  // 64 sub-buckets per power of two
  static constexpr int kSub = 1 << kSubBits;
  static constexpr int kPowers = 40;  // up to 2^40 ns ≈ 18 minutes above 1 µs
  static size_t index(int64_t ns);
  static int64_t upper_edge(size_t index);
  std::array<uint64_t, kPowers * kSub> buckets_{};
  uint64_t count_ = 0;
  int64_t max_ = 0;
  __int128 sum_ = 0;
};

}  // namespace siomq::bench
