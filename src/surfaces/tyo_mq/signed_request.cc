#include "surfaces/tyo_mq/signed_request.h"

#include <boost/asio/post.hpp>

#include "auth/manager_proof.h"
#include "net/worker_pool.h"
#include "surfaces/tyo_mq/requests.h"
#include "wire/json_spans.h"

namespace siomq::surfaces {

Result<SignedRequest> signed_request(const Request& request) {
  std::string storage;
  auto object = request_object(request.args, storage);
  if (!object) return make_error("the payload must be an object {body, proof}", 400);
  auto members = json_spans::object_members(*object);
  if (!members) return make_error("the payload must be an object {body, proof}", 400);
  SignedRequest out;
  out.body_raw = "{}";
  for (const auto& m : *members) {
    if (m.key == "body" && m.value != "null") out.body_raw = std::string(m.value);
    if (m.key == "proof") out.proof_raw = std::string(m.value);
  }
  if (out.body_raw.size() > auth::kMaxSignedBody)
    return make_error("the signed body is larger than " + std::to_string(auth::kMaxSignedBody) + " bytes", 413);
  out.body = nlohmann::json::parse(out.body_raw, nullptr, false);
  if (out.body.is_discarded() || !out.body.is_object()) return make_error("body must be an object", 400);
  return out;
}

Result<Signer> verify_signer(Context& ctx, const auth::Snapshot& snap, std::string_view action, const SignedRequest& req,
                             const std::string* realm_key, std::string* nonce) {
  const int64_t now = unix_ms();
  // The cheap checks first (form, window, nonce, body size), then one canonical base for every key.
  auto proof = auth::read_proof(req.proof_raw, now, ctx.nonces);
  if (!proof) return proof.error();
  if (req.body_raw.size() > auth::kMaxSignedBody)
    return make_error("the signed body is larger than " + std::to_string(auth::kMaxSignedBody) + " bytes", 413);
  auto base = auth::proof_base(action, proof->timestamp_ms, proof->nonce, req.body_raw);
  if (!base) return make_error("Invalid manager proof", 401);
  auto accepted = [&](Signer who) -> Result<Signer> {
    if (!ctx.nonces.record(proof->nonce, now)) return make_error("Manager proof nonce was already used", 401);
    if (nonce) *nonce = proof->nonce;
    return who;
  };
  for (const auto& t : snap.auth.tokens) {
    if (t.realm == "*" && t.role == "admin" && !t.token.empty() && auth::signs(*proof, *base, t.token))
      return accepted(Signer::admin);
  }
  if (realm_key && !realm_key->empty() && auth::signs(*proof, *base, *realm_key)) return accepted(Signer::realm);
  return make_error("Invalid manager proof", 401);
}

void once_claimed(Context& ctx, Session& session, Reply& reply, const std::string& nonce,
                  std::function<void(Session&, Reply&)> then, std::function<void(Reply&, const Error&)> refused) {
  if (!ctx.cluster) return then(session, reply);
  ctx.cluster->claim_nonce(nonce, [s = session.shared(), kept = reply.keep(), then = std::move(then),
                          refused = std::move(refused)](const Status& claimed) mutable {
    boost::asio::post(s->worker().io(), [s, kept, claimed, then = std::move(then), refused = std::move(refused)] {
      if (!claimed) return refused(*kept, claimed.error());
      then(*s, *kept);
    });
  });
}

namespace {

std::string json_text(const nlohmann::json& payload) {
  return payload.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace

void answer(Reply& reply, std::string_view event, const nlohmann::json& payload) {
  std::string text = json_text(payload);
  if (reply.has_ack()) reply.ack("[" + text + "]");
  else reply.emit(event, text);
}

nlohmann::json failure(const Error& e) {
  return {{"ok", false}, {"code", e.code ? e.code : 500}, {"message", e.message}};
}

}  // namespace siomq::surfaces
