// The per-socket admission rules of the tyo-mq surface: the §6.3 gate, the realm cap, grants, and
// §11.1's rate-limit answers.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>

#include "auth/live_settings.h"
#include "net/socket.h"
#include "surfaces/tyo_mq/context.h"
#include "surfaces/tyo_mq/socket_endpoint.h"

namespace siomq::surfaces {

// The §6.3 gate for `event` with `roles`; a refusal sends AUTH_FAIL {code, message} and answers the ack
// callback (§0 row 8). An implicit grant is kept on the socket.
bool admit(Context& ctx, const auth::Snapshot& snap, net::Socket& socket, SocketEndpoint& endpoint,
           const net::Message& msg, std::string_view event, std::initializer_list<std::string_view> roles);
// Whether a grant into `realm` would bring a realm into being past `limits.max_realms`: a realm that is
// configured, or that exists already, is always admitted.
bool over_realm_cap(Context& ctx, const auth::Snapshot& snap, const std::string& realm);
// The refusal that goes with it (AUTH_FAIL 429).
inline constexpr std::string_view kTooManyRealms = "Too many realms on this server (limits.max_realms)";
// Gives the socket `grant` (AUTHENTICATION or the gate) and files it under the grant's realm.
void set_grant(Context& ctx, SocketEndpoint& endpoint, auth::Grant grant);

// §11.1: RATE_LIMITED {code:429, reason, retry_after} at most once a second per socket.
void rate_limited(net::Socket& socket, SocketEndpoint& endpoint, std::string_view reason, int64_t retry_after_s);
// Paces an event that carries a credential (a token, a key, a proof) by the socket's credential bucket;
// on refusal RATE_LIMITED and {ok:false, code:429} to the ack callback.
bool within_credential_rate(Context& ctx, net::Socket& socket, const net::Message& msg);
// AUTH_FAIL {code, message}, and {ok:false, code, message} to the ack callback if there is one (§0 row 8).
void auth_fail(net::Socket& socket, const net::Message& msg, int code, std::string_view message);

}  // namespace siomq::surfaces
