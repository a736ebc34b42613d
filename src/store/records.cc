// The JSON encodings of the store's records. Strings are escaped as JSON.stringify escapes them (any
// bytes round-trip, NUL included), the payload and a subscription's spec are spliced raw, attachments are
// base64. Decoding trusts nothing: the text may come from a damaged disk or another program's redis keys.
#include <simdjson.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <optional>
#include <span>

#include "store/store.h"
#include "wire/base64.h"
#include "wire/js_json.h"
#include "wire/json_spans.h"
#include "wire/socketio.h"

namespace siomq::store {
namespace {

// Integers are kept within what a JavaScript number (and so any JSON reader) holds exactly.
constexpr uint64_t kMaxInteger = uint64_t{1} << 53;

void append_key(std::string& out, std::string_view key) {
  out.push_back('"');
  out.append(key);
  out.append("\":");
}

void append_integer(std::string& out, uint64_t v) {
  std::array<char, 24> buf;
  auto end = std::to_chars(buf.data(), buf.data() + buf.size(), v).ptr;
  out.append(buf.data(), end);
}

// Negative times are outside the format (decoding refuses them); writing them as 0 would hide the bug,
// so they are written as they are and the record fails to load rather than load wrong.
void append_time(std::string& out, int64_t ms) {
  if (ms < 0) out.push_back('-');
  append_integer(out, ms < 0 ? 0 - static_cast<uint64_t>(ms) : static_cast<uint64_t>(ms));
}

// The members of a row object, without the braces (a dead row adds its own after them).
void append_row_members(std::string& out, const Row& row) {
  append_key(out, "seq");
  append_integer(out, row.seq);
  out.push_back(',');
  append_key(out, "id");
  sio::append_json_string(out, row.id);
  out.push_back(',');
  append_key(out, "realm");
  sio::append_json_string(out, row.realm);
  out.push_back(',');
  append_key(out, "event");
  sio::append_json_string(out, row.event);
  out.push_back(',');
  append_key(out, "consumer");
  sio::append_json_string(out, row.consumer);
  out.push_back(',');
  append_key(out, "producer");
  sio::append_json_string(out, row.producer);
  out.push_back(',');
  append_key(out, "payload");
  out.append(row.payload);
  out.push_back(',');
  append_key(out, "attachments");
  out.push_back('[');
  for (size_t i = 0; i < row.attachments.size(); ++i) {
    if (i) out.push_back(',');
    out.push_back('"');
    base64::encode_append(out, row.attachments[i]);
    out.push_back('"');
  }
  out.push_back(']');
  out.push_back(',');
  append_key(out, "created_at");
  append_time(out, row.created_ms);
  out.push_back(',');
  append_key(out, "expires_at");
  if (row.expires_ms == 0) out.append("null");
  else append_time(out, row.expires_ms);
}

simdjson::dom::parser& thread_parser() {
  thread_local simdjson::dom::parser parser;
  return parser;
}

bool is_json_object(std::string_view text) {
  std::string tamed;
  auto doc = js::parse(thread_parser(), text, tamed);
  return !doc.error() && doc.value_unsafe().type() == simdjson::dom::element_type::OBJECT;
}

// A JSON integer in [0, 2^53] written plainly (no sign, fraction, exponent or leading zero).
std::optional<uint64_t> parse_integer(std::string_view text) {
  if (text.empty() || text.size() > 16 || (text.size() > 1 && text[0] == '0')) return std::nullopt;
  uint64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || v > kMaxInteger) return std::nullopt;
  return v;
}

constexpr size_t kMaxFields = 12;
constexpr std::array<std::string_view, 10> kRowFields = {
    "seq", "id", "realm", "event", "consumer", "producer", "payload", "attachments", "created_at", "expires_at"};
constexpr std::array<std::string_view, 12> kDeadRowFields = {
    "seq", "id", "realm", "event", "consumer", "producer", "payload", "attachments", "created_at", "expires_at",
    "reason", "dead_lettered_at"};
constexpr std::array<std::string_view, 4> kSubscriptionFields = {"realm", "key", "consumer", "spec"};
static_assert(kDeadRowFields.size() <= kMaxFields && kRowFields.size() <= kMaxFields);

// The members of one record object, read field by field. Every member must be one of the record's
// fields, at most once, and the object must be the whole text. A getter that finds its field missing or
// malformed records the first error and returns an empty value; the caller checks error() once at the end.
class Fields {
 public:
  Fields(std::string_view what, std::string_view text, std::span<const std::string_view> names)
      : what_(what) {
    auto members = json_spans::object_members(text);
    if (!members) {
      fail(std::string("not a JSON object: ") + members.error().message);
      return;
    }
    auto end = json_spans::value_end(text);
    if (!end || text.find_first_not_of(" \t\r\n", *end) != std::string_view::npos) {
      fail("unexpected text after the object");
      return;
    }
    for (auto& m : *members) {
      auto it = std::find(names.begin(), names.end(), m.key);
      if (it == names.end()) {
        fail_field(m.key, "is not a field of this record");
        return;
      }
      auto& slot = values_[static_cast<size_t>(it - names.begin())];
      if (slot) {
        fail_field(m.key, "appears twice");
        return;
      }
      slot = m.value;
    }
    names_ = names;
  }

  std::string string(std::string_view name) {
    auto v = get(name);
    if (!v) return {};
    auto s = json_spans::unescape(*v);
    if (!s) fail_field(name, "must be a string");
    return s ? std::move(*s) : std::string();
  }

  uint64_t integer(std::string_view name) {
    auto v = get(name);
    if (!v) return 0;
    auto n = parse_integer(*v);
    if (!n) fail_field(name, "must be an integer from 0 to 2^53");
    return n.value_or(0);
  }

  int64_t time(std::string_view name) { return static_cast<int64_t>(integer(name)); }

  // A time or null (0).
  int64_t optional_time(std::string_view name) {
    auto v = get(name);
    if (!v || *v == "null") return 0;
    auto n = parse_integer(*v);
    if (!n) fail_field(name, "must be null or an integer from 0 to 2^53");
    return static_cast<int64_t>(n.value_or(0));
  }

  // The raw text of a JSON object.
  std::string object(std::string_view name) {
    auto v = get(name);
    if (!v) return {};
    if (!is_json_object(*v)) fail_field(name, "must be a JSON object");
    return std::string(*v);
  }

  std::vector<std::string> base64_strings(std::string_view name) {
    std::vector<std::string> out;
    auto v = get(name);
    if (!v) return out;
    auto elements = json_spans::array_elements(*v);
    if (!elements) {
      fail_field(name, "must be an array of base64 strings");
      return out;
    }
    for (auto element : *elements) {
      auto text = json_spans::unescape(element);
      auto bytes = text ? base64::decode(*text) : std::nullopt;
      if (!bytes) {
        fail_field(name, "must be an array of base64 strings");
        return {};
      }
      out.push_back(std::move(*bytes));
    }
    return out;
  }

  const std::optional<Error>& error() const { return error_; }

 private:
  std::optional<std::string_view> get(std::string_view name) {
    if (error_) return std::nullopt;
    for (size_t i = 0; i < names_.size(); ++i) {
      if (names_[i] != name) continue;
      if (!values_[i]) fail_field(name, "is missing");
      return values_[i];
    }
    fail_field(name, "is missing");
    return std::nullopt;
  }

  void fail(std::string message) {
    if (!error_) error_ = make_error(std::string(what_) + ": " + message);
  }
  void fail_field(std::string_view name, std::string_view problem) {
    std::string message = "field ";
    sio::append_json_string(message, name);
    message += ' ';
    message += problem;
    fail(std::move(message));
  }

  std::string_view what_;
  std::span<const std::string_view> names_;  // empty when the object was refused
  std::array<std::optional<std::string_view>, kMaxFields> values_;
  std::optional<Error> error_;
};

Row read_row(Fields& f) {
  Row row;
  row.seq = f.integer("seq");
  row.id = f.string("id");
  row.realm = f.string("realm");
  row.event = f.string("event");
  row.consumer = f.string("consumer");
  row.producer = f.string("producer");
  row.payload = f.object("payload");
  row.attachments = f.base64_strings("attachments");
  row.created_ms = f.time("created_at");
  row.expires_ms = f.optional_time("expires_at");
  return row;
}

}  // namespace

std::string encode_row(const Row& row) {
  std::string out;
  out.reserve(160 + row.payload.size() + row.id.size() + row.realm.size() + row.event.size() +
              row.consumer.size() + row.producer.size());
  out.push_back('{');
  append_row_members(out, row);
  out.push_back('}');
  return out;
}

Result<Row> decode_row(std::string_view text) {
  Fields f("row", text, kRowFields);
  Row row = read_row(f);
  if (f.error()) return *f.error();
  return row;
}

std::string encode_dead_row(const DeadRow& dead) {
  std::string out;
  out.reserve(200 + dead.row.payload.size() + dead.reason.size());
  out.push_back('{');
  append_row_members(out, dead.row);
  out.push_back(',');
  append_key(out, "reason");
  sio::append_json_string(out, dead.reason);
  out.push_back(',');
  append_key(out, "dead_lettered_at");
  append_time(out, dead.dead_lettered_ms);
  out.push_back('}');
  return out;
}

Result<DeadRow> decode_dead_row(std::string_view text) {
  Fields f("dead row", text, kDeadRowFields);
  DeadRow dead;
  dead.row = read_row(f);
  dead.reason = f.string("reason");
  dead.dead_lettered_ms = f.time("dead_lettered_at");
  if (f.error()) return *f.error();
  return dead;
}

std::string encode_subscription(const SubscriptionRecord& sub) {
  std::string out;
  out.reserve(64 + sub.realm.size() + sub.key.size() + sub.consumer.size() + sub.spec.size());
  out.push_back('{');
  append_key(out, "realm");
  sio::append_json_string(out, sub.realm);
  out.push_back(',');
  append_key(out, "key");
  sio::append_json_string(out, sub.key);
  out.push_back(',');
  append_key(out, "consumer");
  sio::append_json_string(out, sub.consumer);
  out.push_back(',');
  append_key(out, "spec");
  out.append(sub.spec);
  out.push_back('}');
  return out;
}

Result<SubscriptionRecord> decode_subscription(std::string_view text) {
  Fields f("subscription", text, kSubscriptionFields);
  SubscriptionRecord sub;
  sub.realm = f.string("realm");
  sub.key = f.string("key");
  sub.consumer = f.string("consumer");
  sub.spec = f.object("spec");
  if (f.error()) return *f.error();
  return sub;
}

std::string subscription_id(std::string_view realm, std::string_view key, std::string_view consumer) {
  std::string id;
  id.reserve(realm.size() + key.size() + consumer.size() + 2);
  id.append(realm);
  id.push_back('\0');
  id.append(key);
  id.push_back('\0');
  id.append(consumer);
  return id;
}

}  // namespace siomq::store
