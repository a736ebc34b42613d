// POST /api/realms (tyo-mq §9): a holder of a prefix-scoped management token (auth.management_tokens)
// creates a realm under its prefix, or rotates the manager_key of one that exists.
//
//   body {realm, manager_key, ephemeral?, ttl?} → 200 {ok, realm, created, manager_key_configured:true,
//                                                     ephemeral, expires_at}
//   404 while auth is off or no management token is configured; 401 "management token required" (an
//   admin token is not one); 400 for a body that is not {realm, manager_key, …} (also above 64 KiB) or a
//   bad ttl; 403 "realm outside managed prefix" (the realm must start with the token's prefix, be longer
//   than it and not be "*" or "default"); 429 past limits.realms_per_hour_per_ip (per client address).
//
// A new realm is made by the management commands' add_realm ({required:true, manager_key}); it is made
// ephemeral (set_realm_lifetime, held to the owning management tokens' ephemeral_only and max_ttl as a
// realm manager is) when the body asks for it, gives a ttl, or a token owning the name is ephemeral_only.
// An existing realm only has its key rotated (set_realm_manager_key). The change is written to the settings
// file before the 200. A refused request changes nothing: no realm, no settings write, and no use of the
// address's hourly allowance (taken only once the request is valid).
//
// Threading: handle() on the connection's worker; the per-address buckets are behind a mutex, at most
// kMaxTrackedAddresses of them (addresses idle for an hour are forgotten; past the cap new addresses are
// refused with 429 until some are).
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "auth/limits.h"
#include "surfaces/http/router.h"

namespace siomq::surfaces {
struct Context;
}

namespace siomq::surfaces::http {

inline constexpr size_t kMaxTrackedAddresses = 10000;

class RealmProvisioning {
 public:
  explicit RealmProvisioning(std::shared_ptr<Context> ctx) : ctx_(std::move(ctx)) {}
  void handle(ApiCall& call);

 private:
  // Takes one realm creation from `address`'s hourly allowance; the seconds to wait when there is none.
  int64_t take_allowance(const std::string& address, double per_hour, int64_t now_ms);

  std::shared_ptr<Context> ctx_;
  struct Allowance {
    auth::TokenBucket bucket;
    int64_t last_ms = 0;
  };
  std::mutex mu_;
  std::unordered_map<std::string, Allowance> allowances_;
};

}  // namespace siomq::surfaces::http
