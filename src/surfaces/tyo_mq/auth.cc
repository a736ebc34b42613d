#include "surfaces/tyo_mq/auth.h"

#include <spdlog/spdlog.h>

#include <chrono>

#include "auth/hmac.h"
#include "net/http_client.h"
#include "net/sio_server.h"
#include "net/worker_pool.h"
#include "surfaces/gate.h"
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
// The fields of an authorization request are kept in memory until decided: each is bounded.
constexpr size_t kMaxEnrolmentField = 4096;

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
    session.pending_realm = request->realm;
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

namespace {

bool known_role(const std::string& role) {
  return role == "producer" || role == "consumer" || role == "both" || role == "manager" || role == "admin";
}

// "authreq-" base36(now) "-" 12 hex digits.
std::string request_id() { return "authreq-" + js::base36(static_cast<uint64_t>(unix_ms())) + "-" + auth::random_hex(6); }

void on_authorization_request(Context& ctx, Session& session, const Request& request, Reply& reply) {
  const auth::Snapshot& snap = ctx.settings.current();
  auto fail = [&](int code, const std::string& message) {
    json payload = {{"ok", false}, {"code", code}, {"message", message}};
    reply.emit("AUTHORIZATION_REQUEST_FAIL", payload.dump());
    if (reply.has_ack()) reply.ack("[" + payload.dump() + "]");
  };
  std::string storage;
  auto object = request_object(request.args, storage);
  json body = object ? json::parse(*object, nullptr, false) : json();
  if (!body.is_object()) return fail(400, "Invalid authorization request payload");
  auth::AuthorizationRequest r;
  for (auto [key, out] : {std::pair{"realm", &r.realm}, std::pair{"client_id", &r.client_id},
                          std::pair{"client_name", &r.client_name}, std::pair{"client_token", &r.client_token}}) {
    auto it = body.find(key);
    if (it == body.end() || !it->is_string() || it->get<std::string>().empty())
      return fail(400, std::string(key) + " must be a non-empty string");
    if (it->get<std::string>().size() > kMaxEnrolmentField)
      return fail(400, std::string(key) + " is longer than " + std::to_string(kMaxEnrolmentField) + " bytes");
    *out = it->get<std::string>();
  }
  auto role = body.find("role");
  r.role = role != body.end() && role->is_string() && known_role(role->get<std::string>()) ? role->get<std::string>() : "both";
  if (auto c = body.find("challenge_response"); c != body.end()) {
    r.challenge_response_json = c->dump();
    if (r.challenge_response_json.size() > kMaxEnrolmentField) return fail(400, "challenge_response is too long");
  }
  r.request_id = request_id();
  r.tell_requester = [weak = std::weak_ptr<Session>(session.shared())](std::string_view event, std::string_view payload) {
    if (auto s = weak.lock()) s->notify(event, payload);
  };
  auto max_pending = snap.limits.enabled ? static_cast<size_t>(snap.limits.values.max_pending_authorization_requests) : 0;
  auto filed = ctx.enrolment.submit(std::move(r), max_pending, unix_ms());
  if (!filed) return fail(filed.error().code, filed.error().message);
  spdlog::info("auth: authorization request {} for realm '{}' from client '{}'", filed->request_id, log_text(filed->realm),
               log_text(filed->client_id));
  json payload = {{"ok", true}, {"request_id", filed->request_id}, {"status", "pending"}};
  reply.emit("AUTHORIZATION_REQUEST_OK", payload.dump());
  if (reply.has_ack()) reply.ack("[" + payload.dump() + "]");
}

const std::string* manager_key(const auth::Snapshot& snap, const std::string& realm) {
  const auth::RealmConfig* rc = snap.auth.realm(realm);
  return rc && rc->manager_key ? &*rc->manager_key : nullptr;
}

void fail_authorization(Reply& reply, const Error& e) { answer(reply, "AUTHORIZATION_FAIL", failure(e)); }

void on_authorization_next(Context& ctx, Session& session, const Request& request, Reply& reply) {
  const auth::Snapshot& snap = ctx.settings.current();
  auto req = signed_request(request);
  if (!req) return fail_authorization(reply, req.error());
  std::optional<std::string> realm;
  if (auto it = req->body.find("realm"); it != req->body.end() && it->is_string() && !it->get<std::string>().empty())
    realm = it->get<std::string>();
  std::string nonce;
  auto signer = verify_signer(ctx, snap, "AUTHORIZATION_NEXT", *req, realm ? manager_key(snap, *realm) : nullptr, &nonce);
  if (!signer) return fail_authorization(reply, signer.error());
  once_claimed(ctx, session, reply, nonce, [ctx = ctx.shared_from_this(), realm](Session&, Reply& r) {
    auto next = ctx->enrolment.next(realm);
    answer(r, "AUTHORIZATION_NEXT_RESULT", {{"ok", true}, {"request", next ? auth::public_request(*next) : json()}});
  }, fail_authorization);
}

// The decision, once the proof is accepted (and its nonce claimed in a cluster).
void decide(Context& ctx, Reply& reply, const json& body, const std::string& request_id);

void on_authorization_decide(Context& ctx, Session& session, const Request& request, Reply& reply) {
  const auth::Snapshot& snap = ctx.settings.current();
  auto req = signed_request(request);
  if (!req) return fail_authorization(reply, req.error());
  const json& body = req->body;
  auto id = body.find("request_id");
  std::string request_id = id != body.end() && id->is_string() ? id->get<std::string>() : "";
  auto pending = ctx.enrolment.pending(request_id);
  // An admin may sign for any request; a realm's manager only for a pending request of its realm.
  std::string nonce;
  auto signer =
      verify_signer(ctx, snap, "AUTHORIZATION_DECIDE", *req, pending ? manager_key(snap, pending->realm) : nullptr, &nonce);
  if (!signer) return fail_authorization(reply, signer.error());
  once_claimed(ctx, session, reply, nonce, [ctx = ctx.shared_from_this(), body = std::move(req->body), request_id](Session&, Reply& r) {
    decide(*ctx, r, body, request_id);
  }, fail_authorization);
}

void decide(Context& ctx, Reply& reply, const json& body, const std::string& request_id) {
  auto fail = [&](const Error& e) { fail_authorization(reply, e); };
  auto pending = ctx.enrolment.pending(request_id);
  if (!pending) return fail(make_error("Pending authorization request not found", 404));
  auto approved = body.find("approved");
  if (approved == body.end() || !approved->is_boolean()) return fail(make_error("approved must be a boolean", 400));
  std::string role = pending->role;
  if (auto r = body.find("role"); r != body.end() && !r->is_null()) {
    if (!r->is_string()) return fail(make_error("role must be a string", 400));
    if (!r->get<std::string>().empty()) role = r->get<std::string>();
  }
  std::optional<std::string> reason;
  if (auto r = body.find("reason"); r != body.end() && r->is_string()) reason = r->get<std::string>();
  if (approved->get<bool>()) {
    // The token joins auth.tokens (unless that exact token is already there) and the file is written.
    auto saved = ctx.settings.update([&](json& doc) -> Status {
      json& tokens = doc["auth"]["tokens"];
      if (tokens.is_null()) tokens = json::array();
      for (const auto& t : tokens) {
        if (t.is_object() && t.value("token", "") == pending->client_token) return Ok{};
      }
      tokens.push_back({{"client_id", pending->client_id},
                        {"client_name", pending->client_name},
                        {"approved_at", unix_ms()},
                        {"token", pending->client_token},
                        {"realm", pending->realm},
                        {"role", role}});
      return Ok{};
    });
    if (!saved) return fail(saved.error());
  }
  auto decided = ctx.enrolment.decide(request_id, approved->get<bool>(), role, reason, unix_ms());
  if (!decided) return fail(decided.error());
  spdlog::info("auth: authorization request {} {}", decided->request_id, decided->status);
  if (decided->tell_requester) {
    json note = decided->status == "approved"
                    ? json{{"request_id", decided->request_id}, {"realm", decided->realm}, {"role", decided->role}}
                    : json{{"request_id", decided->request_id}, {"reason", reason ? json(*reason) : json()}};
    decided->tell_requester(decided->status == "approved" ? "AUTHORIZATION_APPROVED" : "AUTHORIZATION_REJECTED",
                            note.dump());
  }
  answer(reply, "AUTHORIZATION_DECIDE_RESULT", {{"ok", true}, {"request", auth::public_request(*decided)}});
}

}  // namespace

void register_auth_handlers(const std::shared_ptr<Context>& ctx, net::Namespace& ns) {
  ns.handlers["AUTHENTICATION"] = socket_handler(ctx, on_authentication);
  ns.handlers["AUTHORIZATION_REQUEST"] = socket_handler(ctx, on_authorization_request);
  ns.handlers["AUTHORIZATION_NEXT"] = socket_handler(ctx, on_authorization_next);
  ns.handlers["AUTHORIZATION_DECIDE"] = socket_handler(ctx, on_authorization_decide);
}

}  // namespace siomq::surfaces
