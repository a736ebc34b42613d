#include "cluster/relay_message.h"

#include <charconv>
#include <vector>

#include "wire/base64.h"
#include "wire/js_json.h"
#include "wire/json_spans.h"
#include "wire/socketio.h"

namespace siomq::cluster {
namespace {

Error bad(const std::string& why) { return Error{400, "relayed message: " + why}; }

void append_string_or_null(std::string& out, const std::optional<std::string>& s) {
  if (s) sio::append_json_string(out, *s);
  else out += "null";
}

// A string member; nullopt when absent or null; an error for any other type.
Result<std::optional<std::string>> optional_text(const std::vector<json_spans::Member>& members, std::string_view name) {
  std::string_view v = json_spans::last_member(members, name);
  if (v.empty() || v == "null") return std::optional<std::string>{};
  if (v.front() != '"') return bad(std::string(name) + " must be a string");
  auto s = json_spans::unescape(v);
  if (!s) return bad(std::string(name) + " is not a valid string");
  return std::optional<std::string>{std::move(*s)};
}

// A JSON integer from 0 to 2^64 - 1, digits only; nullopt otherwise.
std::optional<uint64_t> whole_number(std::string_view v) {
  uint64_t n = 0;
  auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
  if (ec != std::errc() || end != v.data() + v.size() || v.empty() || v.front() == '-') return std::nullopt;
  return n;
}

constexpr std::string_view kAnswerHead = "{\"confirmed\":";
constexpr size_t kMaxAnswerBytes = 64 * 1024;

}  // namespace

std::string encode_relay_answer(const RelayAnswer& a) {
  std::string out(kAnswerHead);
  out += std::to_string(a.confirm);
  out += ",\"node_id\":";
  sio::append_json_string(out, a.node_id);
  out += ",\"stored\":";
  out += std::to_string(a.stored);
  if (a.error) {
    out += ",\"error\":";
    sio::append_json_string(out, *a.error);
  }
  out += '}';
  return out;
}

bool is_relay_answer(std::string_view text) { return text.starts_with(kAnswerHead); }

std::optional<RelayAnswer> decode_relay_answer(std::string_view text) {
  if (text.size() > kMaxAnswerBytes || !js::validate(text)) return std::nullopt;
  auto members = json_spans::object_members(text);
  if (!members) return std::nullopt;
  RelayAnswer a;
  auto confirm = whole_number(json_spans::last_member(*members, "confirmed"));
  auto stored = whole_number(json_spans::last_member(*members, "stored"));
  auto node = optional_text(*members, "node_id");
  if (!confirm || !*confirm || !stored || !node || !*node || (*node)->empty()) return std::nullopt;
  auto error = optional_text(*members, "error");
  if (!error) return std::nullopt;
  a.confirm = *confirm;
  a.stored = *stored;
  a.node_id = std::move(**node);
  a.error = std::move(*error);
  return a;
}

std::string with_groups(std::string_view envelope, const std::vector<std::string>& groups) {
  // The envelope ends with the payload's "}" and its own.
  std::string out(envelope.substr(0, envelope.size() - 2));
  out += ",\"groups\":[";
  for (size_t i = 0; i < groups.size(); ++i) {
    if (i) out += ',';
    sio::append_json_string(out, groups[i]);
  }
  out += "]}}";
  return out;
}

std::string encode_relay(const RelayedMessage& m) {
  std::string out;
  out.reserve(192 + m.realm.size() + m.event.size() + m.message.size() + m.enc.size() + m.to.size());
  out += "{\"node_id\":";
  sio::append_json_string(out, m.node_id);
  if (m.confirm) out.append(",\"confirm\":").append(std::to_string(m.confirm));
  out += ",\"payload\":{\"realm\":";
  sio::append_json_string(out, m.realm);
  out += ",\"event\":";
  sio::append_json_string(out, m.event);
  if (!m.message.empty()) out.append(",\"message\":").append(m.message);
  if (m.producer) {
    out += ",\"producer\":";
    sio::append_json_string(out, *m.producer);
  }
  if (!m.ttl.empty()) out.append(",\"ttl\":").append(m.ttl);
  out += m.guaranteed ? ",\"guaranteed\":true" : ",\"guaranteed\":false";
  out.append(",\"enc\":").append(m.enc.empty() ? "null" : m.enc);
  out.append(",\"to\":").append(m.to.empty() ? "null" : m.to);
  out += ",\"contentType\":";
  append_string_or_null(out, m.content_type);
  out += m.broadcast ? ",\"method\":\"broadcast\"" : ",\"method\":null";
  out += ",\"broadcast\":";
  append_string_or_null(out, m.broadcast_scope);
  out += ",\"group\":";
  append_string_or_null(out, m.group);
  if (!m.attachments.empty()) {
    out += ",\"attachments\":[";
    for (size_t i = 0; i < m.attachments.size(); ++i) {
      out += i ? ",\"" : "\"";
      base64::encode_append(out, m.attachments[i]);
      out += '"';
    }
    out += ']';
  }
  out += "}}";
  return m.groups.empty() ? out : with_groups(out, m.groups);
}

Result<RelayedMessage> decode_relay(std::string_view text, size_t max_bytes) {
  if (text.size() > max_bytes) return bad("larger than " + std::to_string(max_bytes) + " bytes");
  if (auto valid = js::validate(text); !valid) return bad(valid.error().message);
  auto envelope = json_spans::object_members(text);
  if (!envelope) return bad("not an object");
  RelayedMessage m;
  auto node = optional_text(*envelope, "node_id");
  if (!node) return node.error();
  if (!*node || (*node)->empty()) return bad("node_id is required");
  m.node_id = std::move(**node);
  if (std::string_view confirm = json_spans::last_member(*envelope, "confirm"); !confirm.empty() && confirm != "null") {
    auto n = whole_number(confirm);
    if (!n || !*n) return bad("confirm must be a positive integer");
    m.confirm = *n;
  }
  std::string_view payload = json_spans::last_member(*envelope, "payload");
  if (payload.empty() || payload.front() != '{') return bad("payload must be an object");
  auto fields = json_spans::object_members(payload);
  if (!fields) return bad("payload is not an object");

  auto realm = optional_text(*fields, "realm");
  if (!realm) return realm.error();
  if (!*realm || (*realm)->empty()) return bad("realm is required");
  m.realm = std::move(**realm);
  auto event = optional_text(*fields, "event");
  if (!event) return event.error();
  if (!*event || (*event)->empty()) return bad("event must be a non-empty string");
  m.event = std::move(**event);
  m.message = std::string(json_spans::last_member(*fields, "message"));
  auto producer = optional_text(*fields, "producer");
  if (!producer) return producer.error();
  m.producer = std::move(*producer);
  if (std::string_view ttl = json_spans::last_member(*fields, "ttl"); !ttl.empty() && ttl != "null") m.ttl = std::string(ttl);
  m.guaranteed = json_spans::truthy(json_spans::last_member(*fields, "guaranteed"));
  for (auto [name, out] : {std::pair{"enc", &m.enc}, std::pair{"to", &m.to}}) {
    std::string_view v = json_spans::last_member(*fields, name);
    if (!v.empty() && v != "null") *out = std::string(v);
  }
  auto content_type = optional_text(*fields, "contentType");
  if (!content_type) return content_type.error();
  m.content_type = std::move(*content_type);
  m.broadcast = json_spans::last_member(*fields, "method") == "\"broadcast\"";
  auto scope = optional_text(*fields, "broadcast");
  if (!scope) return scope.error();
  m.broadcast_scope = std::move(*scope);
  auto group = optional_text(*fields, "group");
  if (!group) return group.error();
  m.group = std::move(*group);
  if (m.broadcast && !m.producer) return bad("a broadcast needs its producer");
  if (std::string_view list = json_spans::last_member(*fields, "groups"); !list.empty() && list != "null") {
    auto items = json_spans::array_elements(list);
    if (!items) return bad("groups must be an array");
    if (items->size() > kMaxRelayedGroups) return bad("too many groups");
    for (std::string_view item : *items) {
      if (item.empty() || item.front() != '"') return bad("groups must be strings");
      auto name = json_spans::unescape(item);
      if (!name) return bad("a group is not a valid string");
      m.groups.push_back(std::move(*name));
    }
  }
  if (std::string_view list = json_spans::last_member(*fields, "attachments"); !list.empty() && list != "null") {
    auto items = json_spans::array_elements(list);
    if (!items) return bad("attachments must be an array");
    if (items->size() > sio::kMaxAttachments) return bad("more attachments than a client may send");
    for (std::string_view item : *items) {
      // Base64 has no escapes: the string's text is between its quotes.
      if (item.size() < 2 || item.front() != '"') return bad("attachments must be base64 strings");
      auto bytes = base64::decode(item.substr(1, item.size() - 2));
      if (!bytes) return bad("an attachment is not base64");
      m.attachments.push_back(std::move(*bytes));
    }
    // As a client's binary packet is checked: every placeholder names one of them (else the subscriber's
    // client would refuse the packet, and drop its connection).
    for (const std::string* value : {&m.message, &m.enc, &m.to}) {
      if (value->empty() || m.attachments.empty()) continue;  // none: a plain event, placeholders are JSON
      if (auto placed = sio::check_attachment_placeholders(*value, m.attachments.size()); !placed)
        return bad("a placeholder names no attachment");
    }
  }
  return m;
}

}  // namespace siomq::cluster
