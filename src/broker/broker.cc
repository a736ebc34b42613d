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
    if (Slot* mirror = existing(kMirrorRealm)) {
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

}  // namespace siomq::broker
