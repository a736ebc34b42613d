#include "store/record_json.h"

#include <simdjson.h>

#include <algorithm>
#include <charconv>

#include "wire/base64.h"
#include "wire/js_json.h"
#include "wire/json_spans.h"
#include "wire/socketio.h"

namespace siomq::store::record_json {
namespace {

simdjson::dom::parser& thread_parser() {
  thread_local simdjson::dom::parser parser;
  return parser;
}

bool is_json_object(std::string_view text) {
  std::string tamed;
  auto doc = js::parse(thread_parser(), text, tamed);
  return !doc.error() && doc.value_unsafe().type() == simdjson::dom::element_type::OBJECT;
}

}  // namespace

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

void append_time(std::string& out, int64_t ms) {
  if (ms < 0) out.push_back('-');
  append_integer(out, ms < 0 ? 0 - static_cast<uint64_t>(ms) : static_cast<uint64_t>(ms));
}

void append_string(std::string& out, std::string_view s) { sio::append_json_string(out, s); }

void append_base64(std::string& out, std::string_view bytes) {
  out.push_back('"');
  base64::encode_append(out, bytes);
  out.push_back('"');
}

void append_base64_array(std::string& out, const std::vector<std::string>& items) {
  out.push_back('[');
  for (size_t i = 0; i < items.size(); ++i) {
    if (i) out.push_back(',');
    append_base64(out, items[i]);
  }
  out.push_back(']');
}

std::optional<uint64_t> parse_integer(std::string_view text) {
  if (text.empty() || text.size() > 16 || (text.size() > 1 && text[0] == '0')) return std::nullopt;
  uint64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || v > kMaxInteger) return std::nullopt;
  return v;
}

Fields::Fields(std::string_view what, std::string_view text, std::span<const std::string_view> names)
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

std::string Fields::string(std::string_view name) {
  auto v = get(name);
  if (!v) return {};
  auto s = json_spans::unescape(*v);
  if (!s) fail_field(name, "must be a string");
  return s ? std::move(*s) : std::string();
}

std::optional<std::string> Fields::optional_string(std::string_view name) {
  auto v = get(name);
  if (!v || *v == "null") return std::nullopt;
  auto s = json_spans::unescape(*v);
  if (!s) fail_field(name, "must be null or a string");
  return s ? std::optional<std::string>(std::move(*s)) : std::nullopt;
}

uint64_t Fields::integer(std::string_view name) {
  auto v = get(name);
  if (!v) return 0;
  auto n = parse_integer(*v);
  if (!n) fail_field(name, "must be an integer from 0 to 2^53");
  return n.value_or(0);
}

int64_t Fields::time(std::string_view name) { return static_cast<int64_t>(integer(name)); }

int64_t Fields::optional_time(std::string_view name) {
  auto v = get(name);
  if (!v || *v == "null") return 0;
  auto n = parse_integer(*v);
  if (!n) fail_field(name, "must be null or an integer from 0 to 2^53");
  return static_cast<int64_t>(n.value_or(0));
}

std::string Fields::object(std::string_view name) {
  auto v = get(name);
  if (!v) return {};
  if (!is_json_object(*v)) fail_field(name, "must be a JSON object");
  return std::string(*v);
}

std::optional<std::string> Fields::optional_object(std::string_view name) {
  auto v = get(name);
  if (!v || *v == "null") return std::nullopt;
  if (!is_json_object(*v)) fail_field(name, "must be null or a JSON object");
  return std::string(*v);
}

std::string Fields::json_value(std::string_view name) {
  auto v = get(name);
  if (!v) return {};
  if (!js::validate(*v)) fail_field(name, "must be a JSON value");
  return std::string(*v);
}

std::string Fields::base64_string(std::string_view name) {
  auto v = get(name);
  if (!v) return {};
  auto text = json_spans::unescape(*v);
  auto bytes = text ? base64::decode(*text) : std::nullopt;
  if (!bytes) fail_field(name, "must be a base64 string");
  return bytes ? std::move(*bytes) : std::string();
}

std::vector<std::string> Fields::base64_strings(std::string_view name) {
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

std::optional<std::string_view> Fields::raw(std::string_view name) { return get(name); }

std::optional<std::string_view> Fields::get(std::string_view name) {
  if (error_) return std::nullopt;
  for (size_t i = 0; i < names_.size(); ++i) {
    if (names_[i] != name) continue;
    if (!values_[i]) fail_field(name, "is missing");
    return values_[i];
  }
  fail_field(name, "is missing");
  return std::nullopt;
}

void Fields::fail(std::string message) {
  if (!error_) error_ = make_error(std::string(what_) + ": " + message);
}

void Fields::fail_field(std::string_view name, std::string_view problem) {
  std::string message = "field ";
  sio::append_json_string(message, name);
  message += ' ';
  message += problem;
  fail(std::move(message));
}

}  // namespace siomq::store::record_json
