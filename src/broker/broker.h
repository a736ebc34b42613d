// The broker engine's entry point: realms by name, each behind its own lock. Any worker thread may
// call in; the work done under a realm's lock is routing and bookkeeping only, never I/O.
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "broker/interest_ledger.h"
#include "broker/realm_registry.h"

namespace siomq::broker {

class Broker {
 public:
  // The realm that admins monitor: every PRODUCE elsewhere is routed there too (§4.2).
  static constexpr const char* kMirrorRealm = "*";

  struct Routing {
    std::vector<Route> routes;
    std::optional<int64_t> default_ttl_ms;  // the sending producer's (§5.5)
    bool new_name = false;                  // `from` was a name the realm did not know: it is bound now
    std::vector<RemoteGroupPick> remote_picks;  // groups whose turn went to another node (a cluster)
  };
  // Routes a PRODUCE from `realm` — binding the sender's name as §3.5 says, a new one only while the realm
  // holds fewer than `name_room` names — and, when a realm "*" exists, in "*" as well. Every copy, in
  // order: the realm's own first.
  // `remote`: in a cluster, the other nodes' group members (RealmRegistry::GroupScope), for the realm's own
  // copies (realm "*"'s groups stay on this node).
  Routing route_produce(const std::string& realm, std::string_view event, const std::string& from,
                        const std::optional<std::string>& sender_id, const EndpointPtr& sender,
                        size_t name_room = SIZE_MAX, const RemoteGroups* remote = nullptr);

  // Routes a message another node relayed (§10): like route_produce, but it binds no name, creates no realm
  // and skips groups but `groups` (those whose turn the origin gave this node, in the realm itself). Every
  // copy, in order.
  std::vector<Route> route_relayed(const std::string& realm, std::string_view event, const std::string& from,
                                   const std::vector<std::string>& groups = {});
  // The turns of `groups` that were to go to other nodes and could not (the relay refused the message):
  // one member here of each, as route_produce would have picked without other nodes.
  std::vector<Route> route_groups(const std::string& realm, std::string_view event, const std::string& from,
                                  const std::vector<std::string>& groups);

  // Runs `f(RealmRegistry&)` under the realm's lock, creating the realm on first use; returns what f returns.
  template <class F>
  auto with_realm(const std::string& name, F&& f) {
    std::shared_ptr<Slot> slot = slot_for(name);
    std::lock_guard lock(slot->mu);
    Recount recount{*this, *slot};  // runs after f, still under the lock
    return f(slot->realm);
  }

  // Runs `f(RealmRegistry&)` under the realm's lock only if the realm exists (a disconnect must not bring a
  // removed realm back).
  template <class F>
  void if_realm(const std::string& name, F&& f) {
    if (std::shared_ptr<Slot> slot = existing(name)) {
      std::lock_guard lock(slot->mu);
      Recount recount{*this, *slot};
      f(slot->realm);
    }
  }

  // The names of the realms that exist now, and how many there are.
  std::vector<std::string> realm_names();
  size_t realm_count();
  bool has_realm(const std::string& name) { return existing(name) != nullptr; }
  // Forgets a realm's live state (remove_realm, an expired ephemeral realm); returns the connections
  // that were bound in it. A call already inside the realm finishes on the detached state.
  std::vector<EndpointPtr> remove_realm(const std::string& name);
  // Forgets the realms that hold nothing (no name, no subscription) and that no thread is using, so
  // realm names that clients made up and left do not pile up; the next use creates them afresh.
  // Returns how many went.
  size_t reclaim_empty_realms();

  // From now on every realm reports its interest terms to `ledger` (a node in a cluster); call before the
  // first realm is made. The ledger must outlive the broker.
  void track_interest(InterestLedger* ledger) { ledger_ = ledger; }
  // From then on (with track_interest), each call into a realm ends by handing the presence changes it made
  // for the other nodes (RealmRegistry::take_peer_presence) to `sink`, under the realm's lock, so that
  // they leave in the order they were made. Set before the first realm is made.
  using PresenceSink = std::function<void(const std::string& realm, std::vector<PeerPresence> changes)>;
  void share_presence(PresenceSink sink) { presence_sink_ = std::move(sink); }

  // Names bound (producers and consumers) and subscriptions held in every realm together: the server-wide
  // caps are checked against these. Kept up to date after each call into a realm.
  size_t names_total() const { return names_total_.load(std::memory_order_relaxed); }
  size_t subscriptions_total() const { return subscriptions_total_.load(std::memory_order_relaxed); }

 private:
  struct Slot {
    std::string name;
    std::mutex mu;
    RealmRegistry realm;
    size_t names = 0, subscriptions = 0;  // what the totals hold for this realm
    bool detached = false;                // removed: no longer counted
  };
  // Brings the totals up to date with a realm's counts when a call into it ends.
  struct Recount {
    Broker& broker;
    Slot& slot;
    ~Recount() { broker.recount(slot); }
  };
  void recount(Slot& slot);
  void detach(Slot& slot);
  std::shared_ptr<Slot> existing(const std::string& name) {
    std::lock_guard lock(mu_);
    auto it = realms_.find(name);
    return it == realms_.end() ? nullptr : it->second;
  }
  std::shared_ptr<Slot> slot_for(const std::string& name) {
    std::lock_guard lock(mu_);
    auto& slot = realms_[name];
    if (!slot) {
      slot = std::make_shared<Slot>();
      slot->name = name;
      if (ledger_) slot->realm.track_interest();
    }
    return slot;
  }

  std::mutex mu_;
  std::map<std::string, std::shared_ptr<Slot>> realms_;
  std::atomic<size_t> names_total_{0}, subscriptions_total_{0};
  InterestLedger* ledger_ = nullptr;
  PresenceSink presence_sink_;
};

}  // namespace siomq::broker
