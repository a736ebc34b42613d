// The broker engine's entry point: realms by name, each behind its own lock. Any worker thread may
// call in; the work done under a realm's lock is routing and bookkeeping only, never I/O.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "broker/realm.h"

namespace siomq::broker {

class Broker {
 public:
  // The realm that admins monitor: every PRODUCE elsewhere is routed there too (§4.2).
  static constexpr const char* kMirrorRealm = "*";

  struct Routing {
    std::vector<Route> routes;
    std::optional<int64_t> default_ttl_ms;  // the sending producer's (§5.5)
  };
  // Routes a PRODUCE from `realm` — binding the sender's name as §3.5 says — and, when a realm "*"
  // exists, in "*" as well. Every copy, in order: the realm's own first.
  Routing route_produce(const std::string& realm, std::string_view event, const std::string& from,
                        const std::optional<std::string>& sender_id, const EndpointPtr& sender);

  // Runs `f(Realm&)` under the realm's lock, creating the realm on first use; returns what f returns.
  template <class F>
  auto with_realm(const std::string& name, F&& f) {
    std::shared_ptr<Slot> slot = slot_for(name);
    std::lock_guard lock(slot->mu);
    return f(slot->realm);
  }

  // Runs `f(Realm&)` under the realm's lock only if the realm exists (a disconnect must not bring a
  // removed realm back).
  template <class F>
  void if_realm(const std::string& name, F&& f) {
    if (std::shared_ptr<Slot> slot = existing(name)) {
      std::lock_guard lock(slot->mu);
      f(slot->realm);
    }
  }

  // The names of the realms that exist now.
  std::vector<std::string> realm_names();
  // Forgets a realm's live state (remove_realm, an expired ephemeral realm); returns the connections
  // that were bound in it. A call already inside the realm finishes on the detached state.
  std::vector<EndpointPtr> remove_realm(const std::string& name);

 private:
  struct Slot {
    std::mutex mu;
    Realm realm;
  };
  std::shared_ptr<Slot> existing(const std::string& name) {
    std::lock_guard lock(mu_);
    auto it = realms_.find(name);
    return it == realms_.end() ? nullptr : it->second;
  }
  std::shared_ptr<Slot> slot_for(const std::string& name) {
    std::lock_guard lock(mu_);
    auto& slot = realms_[name];
    if (!slot) slot = std::make_shared<Slot>();
    return slot;
  }

  std::mutex mu_;
  std::map<std::string, std::shared_ptr<Slot>> realms_;
};

}  // namespace siomq::broker
