#include "broker/broker.h"

namespace siomq::broker {

Broker::Routing Broker::route_produce(const std::string& realm, std::string_view event, const std::string& from,
                                      const std::optional<std::string>& sender_id, const EndpointPtr& sender) {
  Routing out = with_realm(realm, [&](Realm& r) {
    r.bind_sender(from, sender_id, sender);
    return Routing{r.route(event, from), r.producer_default_ttl(from)};
  });
  for (auto& route : out.routes) route.realm = realm;
  if (realm != kMirrorRealm) {
    if (auto mirror = existing(kMirrorRealm)) {
      std::lock_guard lock(mirror->mu);
      auto more = mirror->realm.route(event, from);
      for (auto& route : more) {
        route.realm = std::string(kMirrorRealm);
        out.routes.push_back(std::move(route));
      }
    }
  }
  return out;
}

std::vector<std::string> Broker::realm_names() {
  std::lock_guard lock(mu_);
  std::vector<std::string> out;
  for (const auto& [name, slot] : realms_) out.push_back(name);
  return out;
}

std::vector<EndpointPtr> Broker::remove_realm(const std::string& name) {
  std::shared_ptr<Slot> slot;
  {
    std::lock_guard lock(mu_);
    auto it = realms_.find(name);
    if (it == realms_.end()) return {};
    slot = std::move(it->second);
    realms_.erase(it);
  }
  std::lock_guard lock(slot->mu);
  auto members = slot->realm.members();
  slot->realm = Realm();
  return members;
}

}  // namespace siomq::broker
