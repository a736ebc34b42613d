#include "surfaces/tyo_mq/requests.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <initializer_list>
#include <utility>
#include <vector>

#include "wire/durations.h"
#include "wire/js_json.h"
#include "wire/json_outline.h"
#include "wire/json_spans.h"

namespace siomq::surfaces {
namespace {

using durations::number;
using json_spans::truthy;

Error malformed(std::string message) { return make_error(std::move(message), kMalformedRequest); }

// The members of a request object, looked up as JavaScript reads `obj.name` (the last duplicate wins):
// scanned by json_spans, or as the transport's validating pass noted them in the arguments `args`.
class Fields {
 public:
  explicit Fields(std::vector<json_spans::Member> members) : members_(std::move(members)) {}
  Fields(std::string_view args, std::span<const ::siomq::json::Outline::Member> noted)
      : args_(args), noted_(noted), outlined_(true) {
    for (size_t i = 0; i < noted_.size(); ++i) {
      std::string_view key = noted_[i].key(args_);
      tags_[i] = noted_[i].key_escaped ? kAnyKey : tag(key.substr(1, key.size() - 2));
    }
  }

  std::string_view raw(std::string_view name) const {
    if (outlined_) {
      // A PRODUCE reads about twenty names (with their aliases): each compares a word per member, and
      // only a member of the same length and first byte (or an escaped key) compares its bytes.
      const uint64_t want = tag(name);
      for (size_t i = noted_.size(); i-- > 0;) {
        if ((tags_[i] == want || tags_[i] == kAnyKey) && key_is(noted_[i], name)) return noted_[i].value(args_);
      }
      return {};
    }
    for (auto it = members_.rbegin(); it != members_.rend(); ++it) {
      if (it->key == name) return it->value;
    }
    return {};
  }
  bool flag(std::string_view name) const { return truthy(raw(name)); }

  // A string field: absent or falsy gives nullopt; a truthy value of another type is an error.
  Result<std::optional<std::string>> text(std::string_view name, std::string_view request) const {
    std::string_view v = raw(name);
    if (!truthy(v)) return std::optional<std::string>{};
    if (v.front() != '"') return malformed(std::string(request) + " field '" + std::string(name) + "' must be a string");
    auto s = json_spans::unescape(v);
    if (!s) return malformed(std::string(request) + " field '" + std::string(name) + "' is not a valid string");
    return std::optional<std::string>{std::move(*s)};
  }

 private:
  // A noted key (raw, quoted) is `name`: compared in place unless it holds an escape (then unescaped).
  bool key_is(const ::siomq::json::Outline::Member& m, std::string_view name) const {
    std::string_view key = m.key(args_);
    if (!m.key_escaped) return key.size() == name.size() + 2 && key.substr(1, name.size()) == name;
    // Unescaping shortens a key at most sixfold ("\u0041" is one byte): one that cannot come out as long as
    // `name` is not unescaped, so no lookup costs more than a short key's unescaping, however long the keys.
    const size_t inner = key.size() - 2;
    if (inner < name.size() || inner > 6 * name.size()) return false;
    auto text = json_spans::unescape(key);
    return text && *text == name;
  }

  // A key's length and first byte in one word; kAnyKey for an escaped key, which only unescaping tells.
  static constexpr uint64_t kAnyKey = ~uint64_t{0};
  static uint64_t tag(std::string_view key) {
    return (uint64_t{key.size()} << 8) | (key.empty() ? 0u : static_cast<unsigned char>(key.front()));
  }

  std::vector<json_spans::Member> members_;
  std::string_view args_;
  std::span<const ::siomq::json::Outline::Member> noted_;
  std::array<uint64_t, ::siomq::json::Outline::kMembers> tags_{};  // of noted_, by index
  bool outlined_ = false;
};

Result<Fields> fields_of(std::string_view object, std::string_view request, Outlined outlined = {}) {
  if (outlined.outline) {
    if (auto noted = outlined.outline->members_of(outlined.args, object)) return Fields(outlined.args, *noted);
  }
  auto members = json_spans::object_members(object);
  if (!members) return malformed(std::string(request) + " payload must be an object");
  return Fields(std::move(*members));
}

// Sets each `*out` from its string field when the field is present and truthy.
Status read_texts(const Fields& f, std::string_view request,
                  std::initializer_list<std::pair<std::string_view, std::string*>> wanted) {
  for (const auto& [name, out] : wanted) {
    auto v = f.text(name, request);
    if (!v) return v.error();
    if (*v) *out = std::move(**v);
  }
  return Ok{};
}

std::optional<std::string> non_empty(std::string s) {
  if (s.empty()) return std::nullopt;
  return s;
}

}  // namespace

Status check_object_text(std::string_view text) {
  size_t start = text.find_first_not_of(" \t\r\n");
  if (start == std::string_view::npos || text[start] != '{') return make_error("not a JSON object");
  return js::validate(text);
}

Result<std::string_view> request_object(std::string_view args, std::string& storage, const ::siomq::json::Outline* outline) {
  std::string_view payload;
  if (outline && outline->describes(args)) {
    if (!outline->root_is_array() || outline->size() < 2) return malformed("missing payload");
    payload = outline->element(args, 1);
  } else {
    auto elements = json_spans::array_elements(args);
    if (!elements || elements->size() < 2) return malformed("missing payload");
    payload = (*elements)[1];
  }
  if (payload.front() == '"') {
    // "accepts a JSON string": the string holds the object's JSON.
    auto text = json_spans::unescape(payload);
    if (!text) return malformed("payload is not a valid string");
    if (auto valid = check_object_text(*text); !valid) return malformed("payload string: " + valid.error().message);
    storage = std::move(*text);
    return std::string_view(storage);
  }
  if (payload.front() != '{') return malformed("payload must be an object or a JSON string of one");
  return payload;
}

Result<SubscribeRequest> parse_subscribe(std::string_view object) {
  auto f = fields_of(object, "SUBSCRIBE");
  if (!f) return f.error();
  // Durability, acks, timeouts, retry, mode and group may also sit in a nested `options` object.
  std::optional<Fields> options;
  if (std::string_view o = f->raw("options"); !o.empty() && o.front() == '{') {
    auto of = fields_of(o, "SUBSCRIBE options");
    if (!of) return of.error();
    options = std::move(*of);
  }
  // The top-level value when it is truthy, else the one in `options` (JavaScript's `obj.x || options.x`).
  auto either = [&](std::string_view name) {
    std::string_view v = f->raw(name);
    if (!truthy(v) && options) v = options->raw(name);
    return v;
  };

  SubscribeRequest r;
  std::string_view event = f->raw("event");
  // The reference's reply for a missing or falsy event, a bare string.
  if (!truthy(event)) return make_error("Message name should be a object", kBareStringError);
  std::string id, consumer_id, consumer_id_camel;
  auto st = read_texts(*f, "SUBSCRIBE",
                       {{"event", &r.event}, {"producer", &r.producer}, {"consumer", &r.consumer}, {"id", &id},
                        {"consumer_id", &consumer_id}, {"consumerId", &consumer_id_camel}, {"scope", &r.scope}});
  if (!st) return st.error();
  r.id = non_empty(id);
  r.consumer_id = non_empty(consumer_id.empty() ? consumer_id_camel : consumer_id);

  r.durable = truthy(either("durable"));
  for (const char* alias : {"ack", "require_ack", "requireAck", "manual_ack", "manualAck"}) r.ack = r.ack || truthy(either(alias));
  r.ack_timeout = either("ack_timeout");
  if (r.ack_timeout.empty()) r.ack_timeout = either("ackTimeout");
  r.retry = either("retry");
  if (!r.retry.empty() && r.retry.front() != '{') {
    if (truthy(r.retry)) return malformed("SUBSCRIBE field 'retry' must be an object");
    r.retry = {};
  }
  std::string mode, group, option_mode, option_group;
  st = read_texts(*f, "SUBSCRIBE", {{"mode", &mode}, {"group", &group}});
  if (!st) return st.error();
  if (options) {
    st = read_texts(*options, "SUBSCRIBE options", {{"mode", &option_mode}, {"group", &option_group}});
    if (!st) return st.error();
  }
  r.mode = mode.empty() ? option_mode : mode;
  r.group = non_empty(group.empty() ? option_group : group);
  return r;
}

Result<ProduceRequest> parse_produce(std::string_view object, Outlined outlined) {
  auto f = fields_of(object, "PRODUCE", outlined);
  if (!f) return f.error();
  ProduceRequest r;
  std::string_view event = f->raw("event");
  if (event.empty() || event == "null") return malformed("PRODUCE requires 'event'");
  if (event.front() != '"' || event == "\"\"") return malformed("PRODUCE field 'event' must be a non-empty string");
  std::string id, group, content_type;
  auto st = read_texts(*f, "PRODUCE",
                       {{"event", &r.event}, {"from", &r.from}, {"id", &id}, {"broadcast", &r.broadcast_scope},
                        {"group", &group}, {"contentType", &content_type}});
  if (!st) return st.error();
  r.message = f->raw("message");
  r.id = non_empty(id);
  r.group = non_empty(group);
  r.content_type = non_empty(content_type);
  for (const char* alias : {"guaranteed", "guaranteed_delivery", "guaranteedDelivery", "durable"})
    r.guaranteed = r.guaranteed || f->flag(alias);
  r.guaranteed = r.guaranteed || f->raw("delivery") == "\"guaranteed\"" || f->raw("delivery_mode") == "\"guaranteed\"";
  r.ttl = f->raw("ttl");
  r.lifespan = f->raw("lifespan");
  r.broadcast = f->raw("method") == "\"broadcast\"";
  if (r.broadcast && !truthy(f->raw("from"))) return malformed("a broadcast PRODUCE requires 'from'");
  r.to = f->raw("to");
  r.enc = f->raw("enc");
  return r;
}

Registration parse_registration(std::string_view object) {
  Registration r;
  auto members = json_spans::object_members(object);
  if (!members) return r;
  Fields f(std::move(*members));
  if (auto name = json_spans::unescape(f.raw("name"))) r.name = std::move(*name);  // an error for anything but a string
  if (auto id = json_spans::unescape(f.raw("id")); id && !id->empty()) r.id = std::move(*id);
  r.default_ttl = f.raw("default_ttl");
  return r;
}

Result<std::string> parse_ack(std::string_view object, Outlined outlined) {
  auto fields = fields_of(object, "ACK", outlined);
  if (!fields) return make_error("Invalid ACK JSON", 400);
  const Fields& f = *fields;
  for (const char* name : {"msgId", "msg_id", "id"}) {
    std::string_view v = f.raw(name);
    if (!truthy(v)) continue;
    if (v.front() == '"') {
      if (auto id = json_spans::unescape(v)) return std::move(*id);
    } else if (number(v)) {
      return std::string(v);  // a numeric id is looked up by its text, as String(id) would
    }
  }
  return make_error("ACK requires msgId", 400);
}

broker::DeliveryPolicy delivery_policy(const SubscribeRequest& r) {
  broker::DeliveryPolicy p;
  p.ack = r.ack;
  if (auto ms = parse_duration_ms(r.ack_timeout)) p.ack_timeout_ms = *ms;
  if (r.retry.empty()) return p;
  auto members = json_spans::object_members(r.retry);
  if (!members) return p;
  Fields f(std::move(*members));
  // max(1, Number(max_attempts || maxAttempts) || 3)
  std::string_view attempts = f.raw("max_attempts");
  if (!truthy(attempts)) attempts = f.raw("maxAttempts");
  std::optional<double> n;
  if (truthy(attempts)) n = durations::js_number(attempts);
  if (n && *n != 0) p.max_attempts = static_cast<int>(std::clamp(std::ceil(*n), 1.0, 1.0e6));
  if (auto ms = parse_duration_ms(f.raw("delay"))) p.retry_delay_ms = *ms;
  p.exponential = f.raw("backoff") == "\"exponential\"";
  return p;
}

std::optional<int64_t> effective_ttl(const ProduceRequest& r, std::optional<int64_t> producer_default_ms,
                                     std::optional<int64_t> store_default_ms) {
  Ttl ttl = parse_ttl(r.ttl);
  if (ttl.kind == Ttl::Kind::absent) {
    auto lifespan = number(r.lifespan);
    if (!(lifespan && *lifespan == -1)) ttl = parse_ttl(r.lifespan);
  }
  if (ttl.kind == Ttl::Kind::never) return std::nullopt;
  if (ttl.kind == Ttl::Kind::ms) return ttl.ms;
  if (producer_default_ms) return *producer_default_ms < 0 ? std::nullopt : producer_default_ms;
  return store_default_ms;
}

Result<ProduceChunk> parse_produce_chunk(std::string_view object) {
  auto f = fields_of(object, "PRODUCE_CHUNK");
  if (!f) return f.error();
  auto count = [](std::string_view v) -> std::optional<size_t> {
    if (v.empty() || v.size() > 9 || v.find_first_not_of("0123456789") != std::string_view::npos) return std::nullopt;
    return static_cast<size_t>(std::stoul(std::string(v)));
  };
  ProduceChunk c;
  std::string_view transfer = f->raw("transferId");
  c.transfer_id = transfer.empty() || transfer.front() != '"' ? std::string(transfer) : json_spans::unescape(transfer).value_or("");
  c.data = json_spans::unescape(f->raw("data")).value_or("");
  auto index = count(f->raw("index"));
  auto total = count(f->raw("total"));
  if (c.transfer_id.empty() || !index || !total || *total == 0 || *index >= *total)
    return malformed("PRODUCE_CHUNK requires transferId, index < total and data");
  c.index = *index;
  c.total = *total;
  return c;
}

}  // namespace siomq::surfaces
