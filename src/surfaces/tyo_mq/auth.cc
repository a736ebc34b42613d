#include "surfaces/tyo_mq/auth.h"

#include <spdlog/spdlog.h>

#include <chrono>

#include "auth/hmac.h"
#include "net/http_client.h"
#include "net/sio_server.h"
#include "net/worker_pool.h"
#include "surfaces/gate.h"
#include "surfaces/tyo_mq/enrolment.h"
#include "surfaces/tyo_mq/signed_request.h"
#include "surfaces/tyo_mq/socket_adapter.h"
#include "surfaces/tyo_mq/requests.h"
#include "wire/js_json.h"
#include "wire/log_text.h"

namespace siomq::surfaces {
namespace {

using nlohmann::json;

// Longer tokens are refused without any check (no validator is asked about them).
constexpr size_t kMaxTokenBytes = 8192;

void auth_ok(Reply& reply, const auth::Grant& g) {
  json payload = {{"realm", g.realm}, {"role", g.role}};
  reply.emit("AUTH_OK", payload.dump());
  if (reply.has_ack()) reply.ack("[" + json{{"ok", true}, {"realm", g.realm}, {"role", g.role}}.dump() + "]");
}

// The AUTHENTICATION payload: token, realm and role are strings when present (null counts as absent);
// an empty token or realm counts as absent.
std::optional<auth::AuthRequest> parse_auth_request(const Request& request) {
  std::string storage;
  auto object = request_object(request.args, storage);
  if (!object) return std::nullopt;
  json body = json::parse(*object, nullptr, false);
  if (body.is_discarded() || !body.is_object()) return std::nullopt;
  auth::AuthRequest r;
  for (const char* key : {"token", "realm", "role"}) {
    auto it = body.find(key);
    if (it == body.end() || it->is_null()) continue;
    if (!it->is_string()) return std::nullopt;
    std::string v = it->get<std::string>();
    if (v.empty() && std::string_view(key) != "role") continue;
    if (std::string_view(key) == "token") r.token = std::move(v);
    else if (std::string_view(key) == "realm") r.realm = std::move(v);
    else r.role = std::move(v);
  }
  if (auto it = body.find("key"); it != body.end()) {
    r.has_key = !it->is_null();
    if (it->is_string()) r.key = it->get<std::string>();
  }
  return r;
}

// §6.4 step 5: POST {token, realm?} to the validator; a 2xx JSON answer with truthy realm and role,
// and not valid:false / ok:false, grants them — unless a scoped validator answers outside its scope.
void ask_validator(Context& ctx, Session& session, Reply& reply, const auth::ExternalCheck& check,
                   const std::string& token, int64_t timeout_ms) {
  json body = {{"token", token}};
  if (check.realm) body["realm"] = *check.realm;
  std::vector<std::pair<std::string, std::string>> headers{{"content-type", "application/json"}};
  if (!check.secret.empty()) headers.emplace_back("x-mq-auth-secret", check.secret);
  session.authenticating = true;
  net::http_post(session.worker().io(), check.url, std::move(headers), body.dump(), std::chrono::milliseconds(timeout_ms),
                 [ctx = ctx.shared_from_this(), client = session.shared(), later = reply.keep(), check,
                  url = check.url](Result<net::PostResponse> r) {
                   client->authenticating = false;
                   if (!later->open()) return;
                   if (!r) {
                     spdlog::warn("auth: validator {} failed: {}", log_text(url), log_text(r.error().message));
                     return auth_fail(*later, 401, "Authentication failed");
                   }
                   // Validated like client JSON first: a validator may be a realm manager's server.
                   json answer = js::validate(r->body) ? json::parse(r->body, nullptr, false) : json();
                   auto truthy = [&](const char* k) {
                     auto it = answer.find(k);
                     return it != answer.end() && it->is_string() && !it->get<std::string>().empty();
                   };
                   auto is_false = [&](const char* k) {
                     auto it = answer.find(k);
                     return it != answer.end() && it->is_boolean() && !it->get<bool>();
                   };
                   bool ok = r->status >= 200 && r->status < 300 && answer.is_object() && truthy("realm") &&
                             truthy("role") && !is_false("valid") && !is_false("ok");
                   if (!ok) return auth_fail(*later, 401, "Invalid authentication token");
                   auto granted = auth::external_grant(check, answer["realm"].get<std::string>(), answer["role"].get<std::string>());
                   if (!granted) {
                     spdlog::warn("auth: the answer of validator {} is not trusted: {}", log_text(url), log_text(granted.error().message));
                     return auth_fail(*later, 401, "Invalid authentication token");
                   }
                   const auth::Grant& g = *granted;
                   // A grant that arrived meanwhile (another AUTHENTICATION cannot run concurrently; the gate can
                   // have granted implicitly) is replaced, as §0 row 9 allows.
                   if (client->grant && !client->grant->implicit) return auth_fail(*later, 403, "Socket is already authenticated");
                   if (over_realm_cap(ctx->broker, ctx->settings.current(), g.realm)) return auth_fail(*later, 429, kTooManyRealms);
                   set_grant(ctx->sessions, *client, g);
                   auth_ok(*later, g);
                 });
}

}  // namespace

void on_authentication(Context& ctx, Session& session, const Request& req, Reply& reply) {
  const auth::Snapshot& snap = ctx.settings.current();
  auto request = parse_auth_request(req);
  if (!request) return auth_fail(reply, 401, "Invalid authentication payload");
  if (session.authenticating) return auth_fail(reply, 409, "Authentication already in progress");
  // §6.2 step 3: the declared realm is remembered even when this attempt fails.
  if (snap.auth.enabled && !(session.grant && !session.grant->implicit) && request->realm)
    session.held().pending_realm = request->realm;
  if (request->token && request->token->size() > kMaxTokenBytes && snap.auth.enabled &&
      !(session.grant && !session.grant->implicit))
    return auth_fail(reply, 401, "Invalid authentication token");
  int64_t now_s = unix_ms() / 1000;
  auto outcome = auth::authenticate(snap.auth, *request, session.grant, now_s);
  switch (outcome.kind) {
    case auth::AuthOutcome::Kind::granted:
      if (over_realm_cap(ctx.broker, snap, outcome.grant.realm)) return auth_fail(reply, 429, kTooManyRealms);
      set_grant(ctx.sessions, session, outcome.grant);
      return auth_ok(reply, outcome.grant);
    case auth::AuthOutcome::Kind::refused:
      return auth_fail(reply, outcome.code, outcome.message);
    case auth::AuthOutcome::Kind::ask_external:
      return ask_validator(ctx, session, reply, outcome.external, *request->token,
                           snap.auth.validator_timeout_ms);
  }
}

void register_auth_handlers(const std::shared_ptr<Context>& ctx, net::Namespace& ns) {
  ns.handlers["AUTHENTICATION"] = socket_handler(ctx, on_authentication);
  register_enrolment_handlers(ctx, ns);
}

}  // namespace siomq::surfaces
