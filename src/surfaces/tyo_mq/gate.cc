#include "surfaces/tyo_mq/gate.h"

#include "wire/socketio.h"

namespace siomq::surfaces {

bool over_realm_cap(Context& ctx, const auth::Snapshot& snap, const std::string& realm) {
  const double cap = snap.limits.server.max_realms;
  if (cap <= 0 || static_cast<double>(ctx.broker.realm_count()) < cap) return false;
  return !snap.auth.realm(realm) && !ctx.broker.has_realm(realm);
}

void set_grant(Context& ctx, SocketEndpoint& endpoint, auth::Grant grant) {
  bool moved = !endpoint.grant || endpoint.grant->realm != grant.realm;
  endpoint.grant = std::move(grant);
  if (moved) ctx.sockets.set_realm(&endpoint, endpoint.grant->realm);
}

bool admit(Context& ctx, const auth::Snapshot& snap, net::Socket& socket, SocketEndpoint& endpoint,
           const net::Message& msg, std::string_view event, std::initializer_list<std::string_view> roles) {
  if (!snap.auth.enabled) return true;
  auto outcome = auth::gate(snap.auth, endpoint.grant, endpoint.pending_realm, event, roles);
  if (outcome.new_grant && over_realm_cap(ctx, snap, outcome.new_grant->realm)) {
    auth_fail(socket, msg, 429, kTooManyRealms);
    return false;
  }
  if (outcome.new_grant) set_grant(ctx, endpoint, std::move(*outcome.new_grant));
  if (outcome.allowed) return true;
  auth_fail(socket, msg, outcome.code, outcome.message);
  return false;
}

void auth_fail(net::Socket& socket, const net::Message& msg, int code, std::string_view message) {
  std::string payload = "{\"code\":" + std::to_string(code) + ",\"message\":";
  sio::append_json_string(payload, message);
  payload.push_back('}');
  socket.emit("AUTH_FAIL", payload);
  if (msg.ack_id) socket.ack(*msg.ack_id, "[" + error_reply(code, message) + "]");
}

bool within_credential_rate(Context& ctx, net::Socket& socket, const net::Message& msg) {
  auto endpoint = endpoint_of(socket);
  const auth::LimitValues& l = ctx.settings.current().limits.for_realm(endpoint->realm());
  int64_t wait = endpoint->credentials.take(1, l.credential_attempts_per_second, l.credential_attempt_burst, steady_ms());
  if (!wait) return true;
  rate_limited(socket, *endpoint, "credential_attempts_per_second", wait);
  if (msg.ack_id) socket.ack(*msg.ack_id, "[" + error_reply(429, "rate limited: credential_attempts_per_second") + "]");
  return false;
}

void rate_limited(net::Socket& socket, SocketEndpoint& endpoint, std::string_view reason, int64_t retry_after_s) {
  int64_t now = steady_ms();
  if (endpoint.rate_limited_at_ms && now - endpoint.rate_limited_at_ms < 1000) return;
  endpoint.rate_limited_at_ms = now;
  std::string payload = "{\"code\":429,\"reason\":";
  sio::append_json_string(payload, reason);
  payload += ",\"retry_after\":" + std::to_string(retry_after_s) + "}";
  socket.emit("RATE_LIMITED", payload);
}

}  // namespace siomq::surfaces
