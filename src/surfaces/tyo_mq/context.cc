#include "surfaces/tyo_mq/context.h"

#include <boost/asio/post.hpp>

#include <algorithm>

#include "net/engine_session.h"
#include "net/worker_pool.h"
#include "surfaces/tyo_mq/requests.h"
#include "wire/clock.h"
#include "wire/json_spans.h"
#include "wire/socketio.h"

namespace siomq::surfaces {

SocketEndpoint::SocketEndpoint(net::Socket& socket)
    : worker_(socket.session().worker()), socket_(socket.weak_from_this()), id_(socket.id()) {}

SocketEndpoint::~SocketEndpoint() {
  // Receipts still in the outbox are answered: the durable queues wait for every one they asked for.
  for (auto& item : outbox_) {
    if (item.receipt) item.receipt(false);
  }
}

const std::string& SocketEndpoint::realm() const {
  static const std::string kDefault = "default";
  return grant ? grant->realm : kDefault;
}

void SocketEndpoint::send(FramesPtr frames) {
  if (worker_.is_current()) {
    if (auto s = socket_.lock()) s->send_frames(*frames);
    return;
  }
  post_outgoing({std::move(frames), {}});
}

void SocketEndpoint::when_sent(net::SentReceipt done) {
  if (worker_.is_current()) {
    if (auto s = socket_.lock()) return s->when_sent(std::move(done));
    return done(false);
  }
  post_outgoing({nullptr, std::move(done)});
}

void SocketEndpoint::post_outgoing(Outgoing item) {
  bool first;
  {
    std::lock_guard lock(outbox_mu_);
    first = outbox_.empty();
    outbox_.push_back(std::move(item));
  }
  if (first) {
    boost::asio::post(worker_.io(), [weak = weak_from_this()] {
      if (auto self = weak.lock()) self->drain_outbox();
    });
  }
}

void SocketEndpoint::drain_outbox() {
  std::vector<Outgoing> batch;
  {
    std::lock_guard lock(outbox_mu_);
    batch.swap(outbox_);
  }
  auto s = socket_.lock();
  for (auto& item : batch) {
    if (item.frames) {
      if (s) s->send_frames(*item.frames);
    } else if (s) {
      s->when_sent(std::move(item.receipt));
    } else {
      item.receipt(false);
    }
  }
}

void SocketEndpoint::close() {
  boost::asio::post(worker_.io(), [socket = socket_] {
    if (auto s = socket.lock(); s && s->connected()) s->disconnect(true);
  });
}

std::shared_ptr<SocketEndpoint> endpoint_of(net::Socket& socket) {
  auto e = socket.state<SocketEndpoint>();
  if (!e) {
    e = std::make_shared<SocketEndpoint>(socket);
    socket.set_state(e);
  }
  return e;
}

std::pair<size_t, size_t> SocketRegistry::add(const std::shared_ptr<SocketEndpoint>& e, const std::string& ip,
                                              int64_t now_ms) {
  std::lock_guard lock(mu_);
  sockets_[e.get()] = Entry{e, e->realm(), ip};
  auto recent = [&](int64_t t) { return now_ms - t < 60'000; };
  if (++adds_ % 1024 == 0) {  // addresses that stopped connecting are forgotten after a minute
    std::erase_if(opened_, [&](auto& kv) { return std::none_of(kv.second.begin(), kv.second.end(), recent); });
  }
  auto& opened = opened_[ip];
  std::erase_if(opened, [&](int64_t t) { return !recent(t); });
  opened.push_back(now_ms);
  return {++per_ip_[ip], opened.size()};
}

void SocketRegistry::set_realm(const SocketEndpoint* e, const std::string& realm) {
  std::lock_guard lock(mu_);
  if (auto it = sockets_.find(e); it != sockets_.end()) it->second.realm = realm;
}

void SocketRegistry::remove(const SocketEndpoint* e) {
  std::lock_guard lock(mu_);
  auto it = sockets_.find(e);
  if (it == sockets_.end()) return;
  auto ip = per_ip_.find(it->second.ip);
  if (ip != per_ip_.end() && --ip->second == 0) per_ip_.erase(ip);
  sockets_.erase(it);
}

std::vector<std::shared_ptr<SocketEndpoint>> SocketRegistry::in_realm(const std::string& realm) {
  std::lock_guard lock(mu_);
  std::vector<std::shared_ptr<SocketEndpoint>> out;
  for (const auto& [ptr, entry] : sockets_) {
    if (entry.realm != realm) continue;
    if (auto e = entry.endpoint.lock()) out.push_back(std::move(e));
  }
  return out;
}

size_t SocketRegistry::size() {
  std::lock_guard lock(mu_);
  return sockets_.size();
}

FramesPtr event_frames(std::string_view event, std::string_view payload, std::vector<std::string> attachments) {
  return std::make_shared<const std::vector<net::OutFrame>>(net::encode_emit("/", event, payload, std::move(attachments)));
}

FramesPtr ack_frames(uint64_t ack_id, std::string_view json_array) {
  return std::make_shared<const std::vector<net::OutFrame>>(net::encode_event("/", ack_id, true, json_array, {}));
}

std::string error_object(int code, std::string_view message) {
  std::string out = "{\"message\":";
  sio::append_json_string(out, message);
  out += ",\"code\":" + std::to_string(code) + "}";
  return out;
}

std::string error_reply(int code, std::string_view message) {
  std::string out = "{\"ok\":false,\"code\":" + std::to_string(code) + ",\"message\":";
  sio::append_json_string(out, message);
  out.push_back('}');
  return out;
}

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

Result<SignedRequest> signed_request(const net::Message& msg) {
  std::string storage;
  auto object = request_object(msg.json, storage);
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
                             const std::string* realm_key) {
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
    return who;
  };
  for (const auto& t : snap.auth.tokens) {
    if (t.realm == "*" && t.role == "admin" && !t.token.empty() && auth::signs(*proof, *base, t.token))
      return accepted(Signer::admin);
  }
  if (realm_key && !realm_key->empty() && auth::signs(*proof, *base, *realm_key)) return accepted(Signer::realm);
  return make_error("Invalid manager proof", 401);
}

std::string json_text(const nlohmann::json& payload) {
  return payload.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

void answer(net::Socket& socket, const net::Message& msg, std::string_view event, const nlohmann::json& payload) {
  std::string text = json_text(payload);
  if (msg.ack_id) socket.ack(*msg.ack_id, "[" + text + "]");
  else socket.emit(event, text);
}

void answer_later(const std::shared_ptr<SocketEndpoint>& to, std::optional<uint64_t> ack_id, std::string_view event,
                  const nlohmann::json& payload) {
  std::string text = json_text(payload);
  if (ack_id) to->send(ack_frames(*ack_id, "[" + text + "]"));
  else to->send(event_frames(event, text));
}

nlohmann::json failure(const Error& e) {
  return {{"ok", false}, {"code", e.code ? e.code : 500}, {"message", e.message}};
}

}  // namespace siomq::surfaces
