#include "surfaces/tyo_mq/enrolment.h"

#include <boost/asio/post.hpp>
#include <spdlog/spdlog.h>

#include "auth/hmac.h"
#include "cluster/shared_requests.h"
#include "net/sio_server.h"
#include "net/worker_pool.h"
#include "surfaces/tyo_mq/requests.h"
#include "surfaces/tyo_mq/signed_request.h"
#include "surfaces/tyo_mq/socket_adapter.h"
#include "wire/js_json.h"
#include "wire/log_text.h"

namespace siomq::surfaces {
namespace {

using nlohmann::json;
using cluster::SharedRequests;

// The fields of an authorization request are kept until decided: each is bounded.
constexpr size_t kMaxEnrolmentField = 4096;

bool known_role(const std::string& role) {
  return role == "producer" || role == "consumer" || role == "both" || role == "manager" || role == "admin";
}

// "authreq-" base36(now) "-" 12 hex digits.
std::string request_id() { return "authreq-" + js::base36(static_cast<uint64_t>(unix_ms())) + "-" + auth::random_hex(6); }

const std::string* manager_key(const auth::Snapshot& snap, const std::string& realm) {
  const auth::RealmConfig* rc = snap.auth.realm(realm);
  return rc && rc->manager_key ? &*rc->manager_key : nullptr;
}

void fail_request(Reply& reply, const Error& e) { answer(reply, "AUTHORIZATION_REQUEST_FAIL", failure(e)); }
void fail_authorization(Reply& reply, const Error& e) { answer(reply, "AUTHORIZATION_FAIL", failure(e)); }

// Continues `f(session, reply, result...)` on the session's worker when the cluster answers, with a reply
// that outlives the handler.
template <class F>
auto on_worker(Session& session, Reply& reply, F f) {
  return [s = session.shared(), kept = reply.keep(), f = std::move(f)](auto result) mutable {
    boost::asio::post(s->worker().io(), [s, kept, f = std::move(f), result = std::move(result)]() mutable {
      f(*s, *kept, result);
    });
  };
}

Result<SharedRequests> read_requests(const std::optional<std::string>& text) { return SharedRequests::parse(text); }

// --- AUTHORIZATION_REQUEST ---------------------------------------------------------------------------

Result<auth::AuthorizationRequest> parse_request(const Request& request) {
  std::string storage;
  auto object = request_object(request.args, storage);
  json body = object ? json::parse(*object, nullptr, false) : json();
  if (!body.is_object()) return make_error("Invalid authorization request payload", 400);
  auth::AuthorizationRequest r;
  for (auto [key, out] : {std::pair{"realm", &r.realm}, std::pair{"client_id", &r.client_id},
                          std::pair{"client_name", &r.client_name}, std::pair{"client_token", &r.client_token}}) {
    auto it = body.find(key);
    if (it == body.end() || !it->is_string() || it->get<std::string>().empty())
      return make_error(std::string(key) + " must be a non-empty string", 400);
    if (it->get<std::string>().size() > kMaxEnrolmentField)
      return make_error(std::string(key) + " is longer than " + std::to_string(kMaxEnrolmentField) + " bytes", 400);
    *out = it->get<std::string>();
  }
  auto role = body.find("role");
  r.role = role != body.end() && role->is_string() && known_role(role->get<std::string>()) ? role->get<std::string>() : "both";
  if (auto c = body.find("challenge_response"); c != body.end()) {
    r.challenge_response_json = c->dump();
    if (r.challenge_response_json.size() > kMaxEnrolmentField) return make_error("challenge_response is too long", 400);
  }
  return r;
}

void filed(Reply& reply, const std::string& id) {
  json payload = {{"ok", true}, {"request_id", id}, {"status", "pending"}};
  reply.emit("AUTHORIZATION_REQUEST_OK", payload.dump());
  if (reply.has_ack()) reply.ack("[" + payload.dump() + "]");
}

void on_authorization_request(Context& ctx, Session& session, const Request& request, Reply& reply) {
  const auth::Snapshot& snap = ctx.settings.current();
  auto parsed = parse_request(request);
  if (!parsed) return fail_request(reply, parsed.error());
  auth::AuthorizationRequest r = std::move(*parsed);
  r.request_id = request_id();
  r.tell_requester = [weak = std::weak_ptr<Session>(session.shared())](std::string_view event, std::string_view payload) {
    if (auto s = weak.lock()) s->notify(event, payload);
  };
  auto max_pending = snap.limits.enabled ? static_cast<size_t>(snap.limits.values.max_pending_authorization_requests) : 0;
  // This node's book first (its caps bound what one node holds); in a cluster the shared document too.
  auto booked = ctx.enrolment.submit(r, max_pending, unix_ms());
  if (!booked) return fail_request(reply, booked.error());
  spdlog::info("auth: authorization request {} for realm '{}' from client '{}'", r.request_id, log_text(r.realm),
               log_text(r.client_id));
  if (!ctx.cluster) return filed(reply, r.request_id);
  r.tell_requester = nullptr;
  ctx.cluster->change_document(
      kSharedRequestsDocument,
      [r, socket = session.id(), node = ctx.cluster->node_id(), max_pending](const std::optional<std::string>& text) -> Result<std::string> {
        auto doc = read_requests(text);
        if (!doc) return doc.error();
        if (auto s = doc->file(r, socket, node, max_pending, unix_ms()); !s) return s.error();
        return doc->text();
      },
      on_worker(session, reply, [ctx = ctx.shared_from_this(), id = r.request_id](Session&, Reply& later, const Status& s) {
        if (s) return filed(later, id);
        ctx->enrolment.withdraw(id);
        fail_request(later, s.error());
      }));
}

// --- AUTHORIZATION_NEXT ------------------------------------------------------------------------------

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
  once_claimed(ctx, session, reply, nonce, [ctx = ctx.shared_from_this(), realm](Session& s, Reply& r) {
    if (!ctx->cluster) {
      auto next = ctx->enrolment.next(realm);
      return answer(r, "AUTHORIZATION_NEXT_RESULT", {{"ok", true}, {"request", next ? auth::public_request(*next) : json()}});
    }
    ctx->cluster->read_document(kSharedRequestsDocument,
                                on_worker(s, r, [realm](Session&, Reply& later, const Result<std::optional<std::string>>& text) {
                                  auto doc = text ? read_requests(*text) : Result<SharedRequests>(text.error());
                                  if (!doc) return fail_authorization(later, doc.error());
                                  answer(later, "AUTHORIZATION_NEXT_RESULT", {{"ok", true}, {"request", doc->next_public(realm)}});
                                }));
  }, fail_authorization);
}

// --- AUTHORIZATION_DECIDE ----------------------------------------------------------------------------

struct Decision {
  bool approved = false;
  std::string role;  // empty: the request's own
  std::optional<std::string> reason;
};

Result<Decision> parse_decision(const json& body) {
  Decision d;
  auto approved = body.find("approved");
  if (approved == body.end() || !approved->is_boolean()) return make_error("approved must be a boolean", 400);
  d.approved = approved->get<bool>();
  if (auto r = body.find("role"); r != body.end() && !r->is_null()) {
    if (!r->is_string()) return make_error("role must be a string", 400);
    d.role = r->get<std::string>();
  }
  if (auto r = body.find("reason"); r != body.end() && r->is_string()) d.reason = r->get<std::string>();
  return d;
}

// The approved token joins auth.tokens (unless that exact token is already there) and the file is written;
// in a cluster the settings change goes to every node.
Status add_token(Context& ctx, const std::string& token, const std::string& client_id, const std::string& client_name,
                 const std::string& realm, const std::string& role) {
  return ctx.settings.update([&](json& doc) -> Status {
    json& tokens = doc["auth"]["tokens"];
    if (tokens.is_null()) tokens = json::array();
    for (const auto& t : tokens) {
      if (t.is_object() && t.value("token", "") == token) return Ok{};
    }
    tokens.push_back({{"client_id", client_id},
                      {"client_name", client_name},
                      {"approved_at", unix_ms()},
                      {"token", token},
                      {"realm", realm},
                      {"role", role}});
    return Ok{};
  });
}

// Tells the requester of a decided request, while it is connected: AUTHORIZATION_APPROVED
// {request_id, realm, role} or AUTHORIZATION_REJECTED {request_id, reason}.
void tell(const auth::AuthorizationRequest& decided) {
  if (!decided.tell_requester) return;
  bool approved = decided.status == "approved";
  json note = approved ? json{{"request_id", decided.request_id}, {"realm", decided.realm}, {"role", decided.role}}
                       : json{{"request_id", decided.request_id},
                              {"reason", decided.decision_reason ? json(*decided.decision_reason) : json()}};
  decided.tell_requester(approved ? "AUTHORIZATION_APPROVED" : "AUTHORIZATION_REJECTED", note.dump());
}

// A request decided in the cluster, whose requester this node booked: told once, and out of the book.
void tell_booked(Context& ctx, const cluster::SharedRequest& r) {
  if (auto decided = ctx.enrolment.decide(r.request_id, r.status == "approved", r.role, r.decision_reason, unix_ms()))
    tell(*decided);
}

void decide_here(Context& ctx, Reply& reply, const Decision& d, const std::string& request_id) {
  auto pending = ctx.enrolment.pending(request_id);
  if (!pending) return fail_authorization(reply, make_error("Pending authorization request not found", 404));
  std::string role = d.role.empty() ? pending->role : d.role;
  if (d.approved) {
    if (auto saved = add_token(ctx, pending->client_token, pending->client_id, pending->client_name, pending->realm, role);
        !saved)
      return fail_authorization(reply, saved.error());
  }
  auto decided = ctx.enrolment.decide(request_id, d.approved, role, d.reason, unix_ms());
  if (!decided) return fail_authorization(reply, decided.error());
  spdlog::info("auth: authorization request {} {}", decided->request_id, decided->status);
  tell(*decided);
  answer(reply, "AUTHORIZATION_DECIDE_RESULT", {{"ok", true}, {"request", auth::public_request(*decided)}});
}

// In a cluster: the document changes first (one node wins a race to decide), then the token is added
// (a settings change every node adopts), then the decision is announced — in that order on Redis.
void decide_shared(Context& ctx, Session& session, Reply& reply, const Decision& d, const std::string& request_id) {
  auto decided = std::make_shared<SharedRequests::Decided>();
  ctx.cluster->change_document(
      kSharedRequestsDocument,
      [d, request_id, decided](const std::optional<std::string>& text) -> Result<std::string> {
        auto doc = read_requests(text);
        if (!doc) return doc.error();
        auto pending = doc->pending(request_id);
        if (!pending) return make_error("Pending authorization request not found", 404);
        auto done = doc->decide(request_id, d.approved, d.role.empty() ? pending->role : d.role, d.reason, unix_ms());
        if (!done) return done.error();
        *decided = std::move(*done);
        return doc->text();
      },
      on_worker(session, reply, [ctx = ctx.shared_from_this(), d, decided](Session&, Reply& later, const Status& s) {
        if (!s) return fail_authorization(later, s.error());
        const cluster::SharedRequest& r = decided->request;
        if (d.approved) {
          if (auto saved = add_token(*ctx, r.client_token, r.client_id, r.client_name, r.realm, r.role); !saved) {
            spdlog::error("auth: authorization request {} is approved but its token could not be saved: {}", r.request_id,
                          saved.error().message);
            return fail_authorization(later, saved.error());
          }
        }
        spdlog::info("auth: authorization request {} {}", r.request_id, r.status);
        ctx->cluster->publish(kDecisionChannel, cluster::encode_decision_note(ctx->cluster->node_id(), decided->stored));
        if (r.node_id == ctx->cluster->node_id()) tell_booked(*ctx, r);
        answer(later, "AUTHORIZATION_DECIDE_RESULT", {{"ok", true}, {"request", decided->shown}});
      }));
}

// Verifies the proof (an admin may sign for any request; a realm's manager only for a pending request of
// its realm), claims its nonce, then decides.
void verify_and_decide(Context& ctx, Session& session, Reply& reply, const SignedRequest& req, const std::string& request_id,
                       const std::string* realm) {
  const auth::Snapshot& snap = ctx.settings.current();
  std::string nonce;
  auto signer = verify_signer(ctx, snap, "AUTHORIZATION_DECIDE", req, realm ? manager_key(snap, *realm) : nullptr, &nonce);
  if (!signer) return fail_authorization(reply, signer.error());
  once_claimed(ctx, session, reply, nonce, [ctx = ctx.shared_from_this(), body = req.body, request_id](Session& s, Reply& r) {
    auto d = parse_decision(body);
    if (!d) return fail_authorization(r, d.error());
    if (ctx->cluster) return decide_shared(*ctx, s, r, *d, request_id);
    decide_here(*ctx, r, *d, request_id);
  }, fail_authorization);
}

void on_authorization_decide(Context& ctx, Session& session, const Request& request, Reply& reply) {
  auto req = signed_request(request);
  if (!req) return fail_authorization(reply, req.error());
  auto id = req->body.find("request_id");
  std::string request_id = id != req->body.end() && id->is_string() ? id->get<std::string>() : "";
  if (!ctx.cluster) {
    auto pending = ctx.enrolment.pending(request_id);
    return verify_and_decide(ctx, session, reply, *req, request_id, pending ? &pending->realm : nullptr);
  }
  // Whose manager may sign is the request's realm: read from the shared document first.
  ctx.cluster->read_document(
      kSharedRequestsDocument,
      on_worker(session, reply, [ctx = ctx.shared_from_this(), req = std::move(*req), request_id](
                                    Session& s, Reply& later, const Result<std::optional<std::string>>& text) {
        auto doc = text ? read_requests(*text) : Result<SharedRequests>(text.error());
        if (!doc) return fail_authorization(later, doc.error());
        auto pending = doc->pending(request_id);
        verify_and_decide(*ctx, s, later, req, request_id, pending ? &pending->realm : nullptr);
      }));
}

}  // namespace

void on_decision_note(Context& ctx, const std::string& text) {
  if (!ctx.cluster) return;
  auto r = cluster::decode_decision_note(text, ctx.cluster->node_id());
  if (!r || r->node_id != ctx.cluster->node_id() || (r->status != "approved" && r->status != "rejected")) return;
  tell_booked(ctx, *r);
}

void forget_shared_requests(Context& ctx, const std::string& realm) {
  if (!ctx.cluster) return;
  ctx.cluster->change_document(
      kSharedRequestsDocument,
      [realm](const std::optional<std::string>& text) -> Result<std::string> {
        auto doc = read_requests(text);
        if (!doc) return doc.error();
        doc->remove_realm(realm);
        return doc->text();
      },
      [realm](const Status& s) {
        if (!s) spdlog::warn("removing realm '{}': its shared authorization requests stay: {}", log_text(realm), s.error().message);
      });
}

void register_enrolment_handlers(const std::shared_ptr<Context>& ctx, net::Namespace& ns) {
  ns.handlers["AUTHORIZATION_REQUEST"] = socket_handler(ctx, on_authorization_request);
  ns.handlers["AUTHORIZATION_NEXT"] = socket_handler(ctx, on_authorization_next);
  ns.handlers["AUTHORIZATION_DECIDE"] = socket_handler(ctx, on_authorization_decide);
}

}  // namespace siomq::surfaces
