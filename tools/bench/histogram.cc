#include "tools/bench/histogram.h"

#include <algorithm>
#include <bit>
#include <cmath>

namespace siomq::bench {

size_t Histogram::index(int64_t ns) {
  uint64_t v = ns < 1 ? 1 : static_cast<uint64_t>(ns);
  int power = std::bit_width(v) - 1;  // floor(log2 v)
  if (power < kSubBits) return static_cast<size_t>(v);  // small values are exact
  int shift = power - kSubBits;
  size_t sub = static_cast<size_t>((v >> shift) & (kSub - 1));
  size_t bucket = static_cast<size_t>(power - kSubBits + 1) * kSub + sub;
  return std::min(bucket, static_cast<size_t>(kPowers * kSub - 1));
}

int64_t Histogram::upper_edge(size_t i) {
  if (i < static_cast<size_t>(kSub)) return static_cast<int64_t>(i);
  size_t power = i / kSub + kSubBits - 1;
  size_t sub = i % kSub;
  uint64_t base = (uint64_t{1} << power) | (static_cast<uint64_t>(sub) << (power - kSubBits));
  return static_cast<int64_t>(base + (uint64_t{1} << (power - kSubBits)) - 1);
}

void Histogram::record(int64_t ns) {
  ++buckets_[index(ns)];
  ++count_;
  max_ = std::max(max_, ns);
  sum_ += ns;
}

int64_t Histogram::quantile(double q) const {
  if (!count_) return 0;
  uint64_t rank = static_cast<uint64_t>(std::ceil(std::clamp(q, 0.0, 1.0) * static_cast<double>(count_)));
  rank = std::max<uint64_t>(rank, 1);
  uint64_t seen = 0;
  for (size_t i = 0; i < buckets_.size(); ++i) {
    seen += buckets_[i];
    if (seen >= rank) return std::min(upper_edge(i), max_);
  }
  return max_;
}

}  // namespace siomq::bench
