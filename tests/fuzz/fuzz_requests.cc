// libFuzzer target for the tyo-mq request payloads (src/surfaces/tyo_mq/requests, and the E2EE directory
// requests of e2ee_requests with the key directory's values, broker/directory_values) and the durations
// they carry (src/wire/durations): what any client, authenticated or not, hands the broker.
//
// The input is a request object's text, sent both ways a client may send it: as the object itself (when
// the packet validator would let it through) and as a JSON string holding it — the route whose inner
// JSON met no validator before issue 12. It is also read as PRODUCE_CHUNK pieces joined, and as a ttl /
// duration. Invariants: whatever request_object returns passes js::validate (so whatever is relayed or
// stored is JSON within the packet's limits); the raw spans a PRODUCE relays are valid JSON themselves;
// nothing crashes, recurses on the input, or runs longer than linear time (libFuzzer's -timeout). An
// E2EE request that parses is within its bounds, and its key or bundle is stored and read back unchanged
// (so what PREKEY_PUBLISH accepts, a restart can load).
#include <cstdint>
#include <string>
#include <string_view>

#include "broker/directory_values.h"
#include "surfaces/tyo_mq/e2ee_requests.h"
#include "surfaces/tyo_mq/requests.h"
#include "wire/durations.h"
#include "wire/js_json.h"
#include "wire/json_outline.h"
#include "wire/socketio.h"

namespace {

using namespace siomq;

void check(bool ok) {
  if (!ok) __builtin_trap();
}

void parse_e2ee(std::string_view object) {
  if (auto id = surfaces::parse_identity(object)) check(!id->empty() && id->size() <= broker::kMaxIdentityBytes);
  if (auto k = surfaces::parse_key_publish(object)) {
    check(broker::check_base64(k->key.public_key, broker::kMaxPublicKeyChars, "k").ok());
    check(broker::js_length(k->key.key_id) <= broker::kMaxKeyIdChars && broker::js_length(k->key.alg) <= broker::kMaxAlgChars);
    auto back = broker::decode_keys(broker::encode_keys({k->key}));
    check(back.ok() && back->size() == 1 && (*back)[0] == k->key);
  }
  if (auto p = surfaces::parse_prekey_publish(object)) {
    check(p->bundle.one_time.size() <= broker::kMaxOneTimePrekeysPerPublish && !p->bundle.kyber_prekey.empty());
    p->bundle.updated_ms = 1234;
    auto back = broker::read_bundle(broker::encode_bundle(p->bundle), true);
    check(back.ok() && *back == p->bundle);
  }
}

void parse_all(std::string_view object) {
  parse_e2ee(object);
  (void)surfaces::parse_registration(object);
  (void)surfaces::parse_ack(object);
  if (auto sub = surfaces::parse_subscribe(object)) (void)surfaces::delivery_policy(*sub);
  if (auto chunk = surfaces::parse_produce_chunk(object)) check(chunk->index < chunk->total);
  if (auto produce = surfaces::parse_produce(object)) {
    for (std::string_view span : {produce->message, produce->to, produce->enc})
      if (!span.empty()) check(js::validate(span).ok());
    (void)surfaces::effective_ttl(*produce, 1000, std::nullopt);
  }
}

// A PRODUCE read with the members the packet's one pass noted (json::Outline) reads exactly as one
// read by scanning: the same object, the same answer, the same fields.
void check_outlined(const std::string& args) {
  json::Outline outline;
  check(json::validate(args, &outline).ok());
  std::string storage, scanned_storage;
  auto object = surfaces::request_object(args, storage, &outline);
  auto scanned_object = surfaces::request_object(args, scanned_storage);
  check(object.ok() == scanned_object.ok());
  if (!object) return;
  check(*object == *scanned_object);
  auto p = surfaces::parse_produce(*object, {args, &outline});
  auto q = surfaces::parse_produce(*scanned_object);
  check(p.ok() == q.ok());
  if (!p) {
    check(p.error().message == q.error().message);
    return;
  }
  check(p->event == q->event && p->message == q->message && p->from == q->from && p->id == q->id);
  check(p->guaranteed == q->guaranteed && p->ttl == q->ttl && p->lifespan == q->lifespan);
  check(p->broadcast == q->broadcast && p->broadcast_scope == q->broadcast_scope && p->group == q->group);
  check(p->to == q->to && p->enc == q->enc && p->content_type == q->content_type);
}

// The same for an ACK.
void check_outlined_ack(const std::string& args) {
  json::Outline outline;
  check(json::validate(args, &outline).ok());
  std::string storage;
  auto object = surfaces::request_object(args, storage, &outline);
  if (!object) return;
  auto a = surfaces::parse_ack(*object, {args, &outline});
  auto b = surfaces::parse_ack(*object);
  check(a.ok() == b.ok());
  if (a) check(*a == *b);
}

// Both routes of one request object: `["E",<object>]` and `["E","<object as a string>"]`.
void as_request(std::string_view input) {
  std::string storage;
  if (js::validate(input).ok()) {
    std::string args = "[\"PRODUCE\",";
    args.append(input).push_back(']');
    if (auto object = surfaces::request_object(args, storage)) parse_all(*object);
    check_outlined(args);
    check_outlined_ack(args);
  }
  std::string args = "[\"PRODUCE\",";
  sio::append_json_string(args, input);
  args.push_back(']');
  auto object = surfaces::request_object(args, storage);
  if (!object) return;
  check(js::validate(*object).ok());
  check(surfaces::check_object_text(*object).ok());
  parse_all(*object);
}

void as_durations(std::string_view input) {
  (void)durations::parse_duration_ms(input);
  (void)durations::parse_ttl(input);
  (void)durations::number(input);
  (void)durations::js_number(input);
  std::string quoted;
  sio::append_json_string(quoted, input);
  (void)durations::parse_duration_ms(quoted);
  (void)durations::parse_ttl(quoted);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  as_request(input);
  as_durations(input);
  // PRODUCE_CHUNK: the pieces were JSON strings; their join is checked before it becomes a PRODUCE.
  if (surfaces::check_object_text(input).ok()) check(js::validate(input).ok());
  return 0;
}
