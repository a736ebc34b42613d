// RealmRegistry::clients: a realm's producers and consumers with their subscriptions, as the web console
// shows them (surfaces/console/console_view.h).
#include <algorithm>

#include "broker/realm_registry.h"

namespace siomq::broker {
namespace {

// The first `limit` names of `names`, sorted; `truncated` is set when some were left out.
template <class Map>
std::vector<std::string> first_names(const Map& names, size_t limit, bool& truncated) {
  std::vector<std::string> out;
  out.reserve(names.size());
  for (const auto& [name, unused] : names) out.push_back(name);
  if (out.size() > limit) {
    std::partial_sort(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(limit), out.end());
    out.resize(limit);
    truncated = true;
  } else {
    std::sort(out.begin(), out.end());
  }
  return out;
}

}  // namespace

RealmRegistry::Clients RealmRegistry::clients(size_t limit) const {
  Clients out;
  for (const auto& name : first_names(producers_, limit, out.truncated))
    out.producers.push_back({name, producers_.at(name).online});
  std::unordered_map<std::string, size_t> at;  // consumer name -> its place in out.consumers
  for (const auto& name : first_names(consumers_, limit, out.truncated)) {
    at.emplace(name, out.consumers.size());
    out.consumers.push_back({name, consumers_.at(name).online, {}});
  }
  // One pass over the realm's subscriptions (a key's in the order they were made), `limit` in all: the
  // realm's cap on subscriptions is far larger, and one consumer must not make the view huge.
  size_t listed = 0;
  for (const auto& [key, subs] : subscriptions_) {
    for (const auto& [id, sub] : subs.in_order) {
      auto it = at.find(sub.consumer);
      if (it == at.end()) continue;
      if (listed == limit) {
        out.truncated = true;
        return out;
      }
      out.consumers[it->second].subscriptions.emplace_back(key, sub.spec);
      ++listed;
    }
  }
  return out;
}

}  // namespace siomq::broker
