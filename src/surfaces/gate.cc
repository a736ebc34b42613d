#include "surfaces/gate.h"

#include "surfaces/http/metrics.h"
#include "wire/socketio.h"

namespace siomq::surfaces {

bool over_realm_cap(broker::Broker& broker, const auth::Snapshot& snap, const std::string& realm) {
  const double cap = snap.limits.server.max_realms;
  if (cap <= 0 || static_cast<double>(broker.realm_count()) < cap) return false;
  return !snap.auth.realm(realm) && !broker.has_realm(realm);
}

void set_grant(SessionRegistry& sessions, Session& session, auth::Grant grant) {
  bool moved = !session.grant || session.grant->realm != grant.realm;
  session.grant = std::move(grant);
  if (moved) sessions.set_realm(&session, session.grant->realm);
}

bool admit(const GateScope& scope, const auth::Snapshot& snap, Session& session, Reply& reply, std::string_view event,
           std::initializer_list<std::string_view> roles) {
  if (!snap.auth.enabled) return true;
  auto outcome = auth::gate(snap.auth, session.grant, session.holdings().pending_realm, event, roles);
  if (outcome.new_grant && over_realm_cap(scope.broker, snap, outcome.new_grant->realm)) {
    auth_fail(reply, 429, kTooManyRealms);
    return false;
  }
  if (outcome.new_grant) set_grant(scope.sessions, session, std::move(*outcome.new_grant));
  if (outcome.allowed) return true;
  auth_fail(reply, outcome.code, outcome.message);
  return false;
}

void auth_fail(Reply& reply, int code, std::string_view message) {
  std::string payload = "{\"code\":" + std::to_string(code) + ",\"message\":";
  sio::append_json_string(payload, message);
  payload.push_back('}');
  reply.emit("AUTH_FAIL", payload);
  if (reply.has_ack()) reply.ack("[" + error_reply(code, message) + "]");
}

bool within_credential_rate(const auth::Snapshot& snap, Session& session, Reply& reply, int64_t now_ms) {
  const auth::LimitValues& l = snap.limits.for_realm(session.realm());
  int64_t wait = session.credentials.take(1, l.credential_attempts_per_second, l.credential_attempt_burst, now_ms);
  if (!wait) return true;
  rate_limited(session, reply, "credential_attempts_per_second", wait, now_ms);
  if (reply.has_ack()) reply.ack("[" + error_reply(429, "rate limited: credential_attempts_per_second") + "]");
  return false;
}

void rate_limited(Session& session, Reply& reply, std::string_view reason, int64_t retry_after_s, int64_t now_ms) {
  http::process_metrics().rate_limited(reason);  // every refusal, though the client hears of one a second
  if (session.rate_limited_at_ms && now_ms - session.rate_limited_at_ms < 1000) return;
  session.rate_limited_at_ms = now_ms;
  std::string payload = "{\"code\":429,\"reason\":";
  sio::append_json_string(payload, reason);
  payload += ",\"retry_after\":" + std::to_string(retry_after_s) + "}";
  reply.emit("RATE_LIMITED", payload);
}

}  // namespace siomq::surfaces
