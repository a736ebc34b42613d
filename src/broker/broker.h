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
  // Runs `f(Realm&)` under the realm's lock, creating the realm on first use; returns what f returns.
  template <class F>
  auto with_realm(const std::string& name, F&& f) {
    Slot& slot = slot_for(name);
    std::lock_guard lock(slot.mu);
    return f(slot.realm);
  }

 private:
  struct Slot {
    std::mutex mu;
    Realm realm;
  };
  Slot& slot_for(const std::string& name) {
    std::lock_guard lock(mu_);
    auto& slot = realms_[name];
    if (!slot) slot = std::make_unique<Slot>();
    return *slot;
  }

  std::mutex mu_;
  std::map<std::string, std::unique_ptr<Slot>> realms_;  // slots are never removed while the server runs
};

}  // namespace siomq::broker
