#include "broker/broker.h"

namespace siomq::broker {

Broker::Routing Broker::route_produce(const std::string& realm, std::string_view event, const std::string& from,
                                      const std::optional<std::string>& sender_id, const EndpointPtr& sender,
                                      size_t name_room, const RemoteGroups* remote) {
  Routing out = with_realm(realm, [&](RealmRegistry& r) {
    bool fresh = r.bind_sender(from, sender_id, sender, name_room);
    Routing routing{{}, r.producer_default_ttl(from), fresh, {}};
    RealmRegistry::GroupScope scope;
    scope.remote = remote ? remote->realm(realm) : nullptr;
    scope.picks = &routing.remote_picks;
    routing.routes = r.route(event, from, scope);
    return routing;
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

std::vector<Route> Broker::route_relayed(const std::string& realm, std::string_view event, const std::string& from,
                                         const std::vector<std::string>& groups) {
  std::vector<Route> out;
  auto route_in = [&](const std::string& name) {
    std::shared_ptr<Slot> slot = existing(name);
    if (!slot) return;
    std::lock_guard lock(slot->mu);
    RealmRegistry::GroupScope scope;
    scope.only = &groups;
    for (auto& route : name == realm ? slot->realm.route(event, from, scope) : slot->realm.route(event, from, false)) {
      route.realm = name;
      out.push_back(std::move(route));
    }
  };
  route_in(realm);
  if (realm != kMirrorRealm) route_in(kMirrorRealm);
  return out;
}

std::vector<Route> Broker::route_groups(const std::string& realm, std::string_view event, const std::string& from,
                                        const std::vector<std::string>& groups) {
  std::vector<Route> out;
  if_realm(realm, [&](RealmRegistry& r) {
    RealmRegistry::GroupScope scope;
    scope.only = &groups;
    scope.groups_only = true;
    out = r.route(event, from, scope);
  });
  for (auto& route : out) route.realm = realm;
  return out;
}

std::vector<std::string> Broker::realm_names() {
  std::lock_guard lock(mu_);
  std::vector<std::string> out;
  for (const auto& [name, slot] : realms_) out.push_back(name);
  return out;
}

size_t Broker::realm_count() {
  std::lock_guard lock(mu_);
  return realms_.size();
}

void Broker::recount(Slot& slot) {
  if (slot.detached) return;
  if (ledger_) {
    ledger_->report(slot.name, slot.realm.take_interest_deltas());
    // (Taken even with no sink, so that they never pile up.)
    auto changes = slot.realm.take_peer_presence();
    if (presence_sink_ && !changes.empty()) presence_sink_(slot.name, std::move(changes));
  }
  size_t names = slot.realm.producer_count() + slot.realm.consumer_count();
  size_t subscriptions = slot.realm.subscription_count();
  // Unsigned wrap-around makes "add the difference" right whichever way the count moved.
  if (names != slot.names) names_total_.fetch_add(names - slot.names, std::memory_order_relaxed);
  if (subscriptions != slot.subscriptions)
    subscriptions_total_.fetch_add(subscriptions - slot.subscriptions, std::memory_order_relaxed);
  slot.names = names;
  slot.subscriptions = subscriptions;
}

// Called with the slot's lock held: its counts leave the totals for good.
void Broker::detach(Slot& slot) {
  names_total_.fetch_sub(slot.names, std::memory_order_relaxed);
  subscriptions_total_.fetch_sub(slot.subscriptions, std::memory_order_relaxed);
  slot.names = slot.subscriptions = 0;
  slot.detached = true;
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
  if (ledger_) {
    // What the realm still wanted goes with it (its earlier changes were reported as they happened).
    std::vector<std::pair<std::string, int>> gone;
    for (auto& term : slot->realm.interest_terms()) gone.emplace_back(std::move(term), -1);
    ledger_->report(name, gone);
  }
  slot->realm = RealmRegistry();
  detach(*slot);
  return members;
}

size_t Broker::reclaim_empty_realms() {
  std::lock_guard lock(mu_);
  size_t gone = 0;
  for (auto it = realms_.begin(); it != realms_.end();) {
    Slot& slot = *it->second;
    // Only the map holds the slot (checked under mu_, so nobody can take it meanwhile): no thread is in
    // the realm or about to enter it. The try_lock is for the memory order; it cannot be contended.
    bool idle = it->second.use_count() == 1 && slot.mu.try_lock();
    if (!idle) {
      ++it;
      continue;
    }
    bool empty = slot.realm.empty();
    if (empty) detach(slot);
    slot.mu.unlock();
    if (empty) {
      it = realms_.erase(it);
      ++gone;
    } else {
      ++it;
    }
  }
  return gone;
}

}  // namespace siomq::broker
