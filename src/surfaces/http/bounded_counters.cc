#include "surfaces/http/bounded_counters.h"

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/registry.h>

#include <atomic>
#include <functional>

namespace siomq::surfaces::http {
namespace {

// Every thread's cache of the series it used, keyed by the family's id and the joined label values.
constexpr size_t kThreadCacheEntries = 4096;

struct KeyHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};

struct ThreadCache {
  std::unordered_map<std::string, prometheus::Counter*, KeyHash, std::equal_to<>> series;
  std::string key;  // reused for every lookup: no allocation once its capacity has grown
};

ThreadCache& thread_cache() {
  thread_local ThreadCache cache;
  return cache;
}

std::atomic<uint64_t> next_id{1};

// 0xff never occurs in UTF-8, so joined values cannot collide.
constexpr char kSeparator = '\xff';

}  // namespace

BoundedCounters::BoundedCounters(prometheus::Registry& registry, const std::string& name, const std::string& help,
                                 std::vector<std::string> label_names, size_t max_series)
    : family_(prometheus::BuildCounter().Name(name).Help(help).Register(registry)),
      names_(std::move(label_names)),
      max_series_(max_series),
      id_(next_id.fetch_add(1, std::memory_order_relaxed)) {}

void BoundedCounters::add(std::initializer_list<std::string_view> values, double n) {
  ThreadCache& cache = thread_cache();
  std::string& key = cache.key;
  key.assign(reinterpret_cast<const char*>(&id_), sizeof id_);
  for (std::string_view v : values) {
    key.append(v);
    key.push_back(kSeparator);
  }
  auto it = cache.series.find(std::string_view(key));
  if (it != cache.series.end()) {
    it->second->Increment(n);
    return;
  }
  prometheus::Counter& counter = find_or_create(std::string_view(key).substr(sizeof id_), values);
  if (cache.series.size() >= kThreadCacheEntries) cache.series.clear();
  cache.series.emplace(key, &counter);
  counter.Increment(n);
}

prometheus::Counter& BoundedCounters::find_or_create(std::string_view key, std::initializer_list<std::string_view> values) {
  std::lock_guard lock(mu_);
  if (auto it = series_.find(std::string(key)); it != series_.end()) return *it->second;
  bool fits = series_.size() < max_series_ && values.size() == names_.size();
  for (std::string_view v : values) {
    if (v.size() > kMaxLabelValue) fits = false;
  }
  if (!fits) {
    if (!other_) {
      prometheus::Labels labels;
      for (const auto& name : names_) labels.emplace(name, std::string(kOtherLabel));
      other_ = &family_.Add(labels);
    }
    return *other_;
  }
  prometheus::Labels labels;
  size_t i = 0;
  for (std::string_view v : values) labels.emplace(names_[i++], std::string(v));
  prometheus::Counter& counter = family_.Add(labels);
  series_.emplace(std::string(key), &counter);
  return counter;
}

size_t BoundedCounters::series() const {
  std::lock_guard lock(mu_);
  return series_.size();
}

double BoundedCounters::total() const {
  std::lock_guard lock(mu_);
  double sum = other_ ? other_->Value() : 0;
  for (const auto& [key, counter] : series_) sum += counter->Value();
  return sum;
}

}  // namespace siomq::surfaces::http
