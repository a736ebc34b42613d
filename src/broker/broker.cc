#include "broker/broker.h"

namespace siomq::broker {

std::vector<Route> Broker::route_produce(const std::string& realm, std::string_view event, const std::string& from,
                                         const std::optional<std::string>& sender_id, const EndpointPtr& sender) {
  std::vector<Route> routes = with_realm(realm, [&](Realm& r) {
    r.bind_sender(from, sender_id, sender);
    return r.route(event, from);
  });
  if (realm != kMirrorRealm) {
    if (Slot* mirror = existing(kMirrorRealm)) {
      std::lock_guard lock(mirror->mu);
      auto more = mirror->realm.route(event, from);
      routes.insert(routes.end(), std::make_move_iterator(more.begin()), std::make_move_iterator(more.end()));
    }
  }
  return routes;
}

}  // namespace siomq::broker
