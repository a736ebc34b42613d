// A Prometheus counter family whose label values come from clients (realm and event names), kept to a
// bounded number of series: the first `max_series` distinct label sets get a series of their own; every
// later one, and any value longer than kMaxLabelValue bytes, is counted in the one series whose values
// are all "__other__". So a client inventing names cannot grow the server's memory (or a scrape) without
// bound: a family holds at most max_series + 1 series of at most kMaxLabelValue bytes per value.
//
// A series appears when it is first incremented (none exist before), as the reference's do.
//
// Threading: add() from any thread. Each thread caches the series it has used (a hash lookup with no lock
// and no allocation once warm); only a thread's first use of a label set takes the family's lock. The
// per-thread cache is bounded too (cleared when it reaches kThreadCacheEntries entries). The counters are
// prometheus-cpp's (atomic). The family lives in the registry given, which must outlive this object.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace prometheus {
class Counter;
class Registry;
template <typename T>
class Family;
}  // namespace prometheus

namespace siomq::surfaces::http {

inline constexpr size_t kMaxLabelValue = 256;  // a realm name's own limit (auth::kMaxRealmName)
inline constexpr std::string_view kOtherLabel = "__other__";

class BoundedCounters {
 public:
  BoundedCounters(prometheus::Registry& registry, const std::string& name, const std::string& help,
                  std::vector<std::string> label_names, size_t max_series);
  BoundedCounters(const BoundedCounters&) = delete;
  BoundedCounters& operator=(const BoundedCounters&) = delete;

  // Adds `n` to the series of `values` (one per label name, in the order given at construction).
  void add(std::initializer_list<std::string_view> values, double n = 1);
  // Distinct label sets with a series of their own (the overflow series not counted).
  size_t series() const;
  // The sum of every series (the overflow one included).
  double total() const;

 private:
  prometheus::Counter& find_or_create(std::string_view key, std::initializer_list<std::string_view> values);

  prometheus::Family<prometheus::Counter>& family_;
  const std::vector<std::string> names_;
  const size_t max_series_;
  const uint64_t id_;  // names this family in the per-thread caches; never reused
  mutable std::mutex mu_;
  std::unordered_map<std::string, prometheus::Counter*> series_;  // by joined values
  prometheus::Counter* other_ = nullptr;
};

}  // namespace siomq::surfaces::http
