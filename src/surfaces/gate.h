// The per-session admission rules every surface applies before it acts on a request: the §6.3 gate,
// the realm cap, grants, and §11.1's rate-limit answers. A refusal is answered on the request's Reply.
//
// Threading: on the session's worker (they change the session); the broker and the registry lock inside.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>

#include "auth/authentication.h"
#include "auth/live_settings.h"
#include "broker/broker.h"
#include "surfaces/reply.h"
#include "surfaces/session.h"
#include "surfaces/session_registry.h"

namespace siomq::surfaces {

// What the gate consults and updates besides the session: how many realms exist, and where sessions are
// filed by realm. Both are owned by the server and outlive every session.
struct GateScope {
  broker::Broker& broker;
  SessionRegistry& sessions;
};

// The §6.3 gate for `event` with `roles`; a refusal sends AUTH_FAIL {code, message} and answers the
// request (§0 row 8). An implicit grant is kept on the session.
bool admit(const GateScope& scope, const auth::Snapshot& snap, Session& session, Reply& reply, std::string_view event,
           std::initializer_list<std::string_view> roles);
// Whether a grant into `realm` would bring a realm into being past `limits.max_realms`: a realm that is
// configured, or that exists already, is always admitted.
bool over_realm_cap(broker::Broker& broker, const auth::Snapshot& snap, const std::string& realm);
// The refusal that goes with it (AUTH_FAIL 429).
inline constexpr std::string_view kTooManyRealms = "Too many realms on this server (limits.max_realms)";
// Gives the session `grant` (AUTHENTICATION or the gate) and files it under the grant's realm.
void set_grant(SessionRegistry& sessions, Session& session, auth::Grant grant);

// §11.1: RATE_LIMITED {code:429, reason, retry_after} at most once a second per session (`now_ms`:
// steady ms).
void rate_limited(Session& session, Reply& reply, std::string_view reason, int64_t retry_after_s, int64_t now_ms);
// Paces a request that carries a credential (a token, a key, a proof) by the session's credential
// bucket; on refusal RATE_LIMITED and {ok:false, code:429} as the answer.
bool within_credential_rate(const auth::Snapshot& snap, Session& session, Reply& reply, int64_t now_ms);
// AUTH_FAIL {code, message}, and {ok:false, code, message} as the answer if one is awaited (§0 row 8).
void auth_fail(Reply& reply, int code, std::string_view message);

}  // namespace siomq::surfaces
