// What a web console's client sends (console_namespace.h), read and judged here, pure: who may open the
// live view (the /console namespace's CONNECT), and as whom:
//   {token}          an admin token (realm "*", role admin) of the settings — the same tokens, compared
//                    the same way (constant time, every one), as the HTTP API's Bearer check;
//   {realm, proof}   a proof (tyo-mq §8.1) signed with that realm's manager_key, action "CONSOLE_CONNECT",
//                    body {realm}: within ±5 minutes, its nonce used once (shared with the signed commands).
// With auth off, anyone is an admin, as on the HTTP API. The view is read-only: the console's actions go
// through the public events (signed commands on "/", the control plane), which check their own credentials.
//
// And `watch` {realm: "<name>"|null}: the realm whose detail the page shows.
//
// Client bytes are read without recursion (wire/json_spans.h). Pure but for the nonce cache (thread-safe):
// any thread. Fuzzed by tests/fuzz/fuzz_auth.cc.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "auth/live_settings.h"
#include "auth/manager_proof.h"
#include "wire/result.h"

namespace siomq::surfaces::console {

inline constexpr std::string_view kConnectAction = "CONSOLE_CONNECT";

struct ConsoleGrant {
  bool admin = false;
  std::string realm;       // a manager's realm; "" for an admin
  std::string credential;  // the admin token or the manager key it was granted for ("" with auth off)
};

// nullopt: refused (the CONNECT is answered "unauthorized", whatever the reason).
std::optional<ConsoleGrant> console_grant(const auth::Snapshot& snap, std::string_view auth_json, auth::NonceCache& nonces,
                                          int64_t now_ms);

// Whether `grant` still holds under the settings now: its admin token still an admin token, its realm's
// manager key unchanged, auth still as it was. A session whose grant no longer holds is closed (a
// revoked token or a rotated key ends what it opened).
bool still_granted(const auth::Snapshot& snap, const ConsoleGrant& grant);

// The realm of a `watch` event's arguments (the packet's data array), nullopt for null; 400 when the
// arguments are not one object whose `realm` is a realm name or null.
Result<std::optional<std::string>> read_watch(std::string_view args);

}  // namespace siomq::surfaces::console
