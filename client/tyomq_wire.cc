// The tyo-mq event bodies (siomq/tyomq.h's requests written as JSON, answers and deliveries read into
// structs), the chunking rules, and the names and proofs of the public header.
#include "tyomq_wire.h"

#include <chrono>

#include "auth/hmac.h"
#include "auth/proof_signature.h"
#include "json_text.h"

namespace siomq::tyomq {
namespace wire {

using simdjson::dom::element;

std::string lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}

// Length in UTF-16 code units, as the JavaScript clients and servers measure a message.
size_t utf16_length(std::string_view s) {
  size_t n = 0;
  for (unsigned char c : s) {
    if ((c & 0xC0) != 0x80) ++n;
    if (c >= 0xF0) ++n;  // a 4-byte sequence is a surrogate pair
  }
  return n;
}

// Pieces of at most `max` bytes, cut at UTF-8 character boundaries (each piece is a JSON string).
std::vector<std::string_view> utf8_pieces(std::string_view s, size_t max) {
  std::vector<std::string_view> out;
  while (!s.empty()) {
    size_t n = std::min(max, s.size());
    while (n < s.size() && n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;
    out.push_back(s.substr(0, n));
    s.remove_prefix(n);
  }
  return out;
}

ConsumedMessage delivery_of(element e, std::vector<std::string> attachments) {
  ConsumedMessage m;
  m.event = json::get_str(e, "event");
  m.message = json::get_raw(e, "message");
  if (m.message.empty()) m.message = "null";
  m.from = json::get_str(e, "from");
  m.msg_id = json::get_str(e, "msgId", json::get_str(e, "msg_id"));
  m.delivery_attempt = json::get_i64(e, "delivery_attempt");
  m.to = json::get_str(e, "to");
  m.enc_json = json::get_raw(e, "enc");
  m.content_type = json::get_str(e, "content_type");
  m.raw = json::to_json(e);
  m.attachments = std::move(attachments);
  return m;
}

ServerError error_of(std::string event, const Reply& r) {
  ServerError err;
  err.event = std::move(event);
  err.raw = r.json;
  auto e = json::first_arg(json::thread_parser(), r.json);
  if (!e) return err;
  if (e->is_string()) {
    err.message = std::string(e->get_string().value_unsafe());
  } else if (e->is_object()) {
    err.code = static_cast<int>(json::get_i64(*e, "code"));
    err.message = json::get_str(*e, "message", json::get_str(*e, "reason"));
  }
  return err;
}

PendingAuthRequest pending_of(element e) {
  PendingAuthRequest p;
  p.request_id = json::get_str(e, "request_id");
  p.status = json::get_str(e, "status");
  p.realm = json::get_str(e, "realm");
  p.role = json::get_str(e, "role");
  p.client_id = json::get_str(e, "client_id");
  p.client_name = json::get_str(e, "client_name");
  p.client_token_hash = json::get_str(e, "client_token_hash");
  p.created_at = json::get_str(e, "created_at");
  p.decided_at = json::get_str(e, "decided_at");
  p.decision_reason = json::get_str(e, "decision_reason");
  p.raw = json::to_json(e);
  return p;
}

// A tyo-mq answer through an ack: {ok:false, code, message} is an Error, anything else the value.
Result<element> answer(const Result<Reply>& r) {
  if (!r) return r.error();
  auto e = json::first_arg(json::thread_parser(), r->json);
  if (!e) return e.error();
  if (e->is_object() && !json::get_bool(*e, "ok", true))
    return Error{static_cast<int>(json::get_i64(*e, "code", errc::protocol)), json::get_str(*e, "message", "refused")};
  return *e;
}

std::string subscribe_json(const SubscribeRequest& r) {
  json::Object o;
  o.str("event", r.event).str_if("producer", r.producer).str_if("consumer", r.consumer);
  if (!r.consumer.empty()) o.str("id", r.consumer);
  o.str_if("consumer_id", r.consumer_id).str_if("scope", r.scope);
  if (r.durable) o.boolean("durable", true);
  if (r.ack || r.manual_ack) o.boolean("ack", true);
  if (r.manual_ack) o.boolean("manual_ack", true);
  o.str_if("ack_timeout", r.ack_timeout);
  if (r.retry) {
    json::Object retry;
    if (r.retry->max_attempts > 0) retry.num("max_attempts", static_cast<int64_t>(r.retry->max_attempts));
    retry.str_if("delay", r.retry->delay).str_if("backoff", r.retry->backoff);
    o.raw("retry", retry.done());
  }
  o.str_if("mode", r.mode).str_if("group", r.group);
  return o.done();
}

std::string produce_json(const ProduceRequest& r) {
  json::Object o;
  o.str("event", r.event).raw("message", r.message.empty() ? "null" : r.message).str_if("from", r.from);
  if (r.guaranteed) o.boolean("guaranteed", true);
  if (r.ttl_seconds) o.num("ttl", *r.ttl_seconds);
  if (r.broadcast) o.str("method", "broadcast").str("broadcast", r.broadcast_scope.empty() ? "realm" : r.broadcast_scope);
  o.str_if("group", r.group).str_if("to", r.to);
  if (!r.enc_json.empty()) o.raw("enc", r.enc_json);
  o.str_if("id", r.id);
  return o.done();
}

}  // namespace wire


std::string consume_event_name(std::string_view producer, std::string_view event, std::string_view scope) {
  if (scope == "all") return "CONSUME-" + wire::lower(producer) + "-TM-ALL";
  std::string key(producer);
  key += "-";
  key += event;
  return "CONSUME-" + wire::lower(key);
}

std::string AdminProof::json() const {
  return json::Object().num("timestamp", timestamp).str("nonce", nonce).str("signature", signature).done();
}

Result<AdminProof> create_admin_proof(std::string_view secret, std::string_view action, std::string_view body_json) {
  AdminProof proof;
  proof.timestamp =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
  proof.nonce = auth::random_hex(16);
  auto sig = auth::sign_proof(action, static_cast<double>(proof.timestamp), proof.nonce, body_json, secret);
  if (!sig) return Error{errc::bad_request, "the body to sign is not JSON: " + sig.error().message};
  proof.signature = std::move(*sig);
  return proof;
}

}  // namespace siomq::tyomq
