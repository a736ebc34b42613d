#include "json_text.h"

#include "wire/js_json.h"
#include "wire/socketio.h"

namespace siomq::json {

void Object::key(std::string_view k) {
  if (out_.size() > 1) out_.push_back(',');
  sio::append_json_string(out_, k);
  out_.push_back(':');
}

Object& Object::str(std::string_view k, std::string_view value) {
  key(k);
  sio::append_json_string(out_, value);
  return *this;
}

Object& Object::num(std::string_view k, int64_t value) {
  key(k);
  out_ += std::to_string(value);
  return *this;
}

Object& Object::num(std::string_view k, double value) {
  key(k);
  out_ += js::number(value);
  return *this;
}

Object& Object::boolean(std::string_view k, bool value) {
  key(k);
  out_ += value ? "true" : "false";
  return *this;
}

Object& Object::raw(std::string_view k, std::string_view json) {
  key(k);
  out_.append(json);
  return *this;
}

Object& Object::strings(std::string_view k, const std::vector<std::string>& values) {
  key(k);
  out_.push_back('[');
  for (size_t i = 0; i < values.size(); ++i) {
    if (i) out_.push_back(',');
    sio::append_json_string(out_, values[i]);
  }
  out_.push_back(']');
  return *this;
}

Object& Object::string_map(std::string_view k, const std::vector<std::pair<std::string, std::string>>& values) {
  key(k);
  out_.push_back('{');
  for (size_t i = 0; i < values.size(); ++i) {
    if (i) out_.push_back(',');
    sio::append_json_string(out_, values[i].first);
    out_.push_back(':');
    sio::append_json_string(out_, values[i].second);
  }
  out_.push_back('}');
  return *this;
}

std::string Object::done() {
  out_.push_back('}');
  return std::move(out_);
}

Result<simdjson::dom::element> first_arg(simdjson::dom::parser& parser, std::string_view args_json) {
  auto doc = parser.parse(args_json.data(), args_json.size());
  if (doc.error()) return Error{errc::protocol, "unreadable answer"};
  if (!doc.value_unsafe().is_array()) return Error{errc::protocol, "answer is not an array"};
  simdjson::dom::array arr = doc.value_unsafe().get_array().value_unsafe();
  for (auto e : arr) return e;
  return Error{errc::protocol, "empty answer"};
}

Result<simdjson::dom::element> ok_answer(simdjson::dom::parser& parser, std::string_view args_json) {
  auto first = first_arg(parser, args_json);
  if (!first) return first.error();
  simdjson::dom::element e = *first;
  if (!e.is_object()) return Error{errc::protocol, "answer is not an object"};
  if (get_bool(e, "ok")) return e;
  auto err = e["error"];
  if (!err.error() && err.value_unsafe().is_object())
    return Error{static_cast<int>(get_i64(err.value_unsafe(), "code", errc::protocol)), get_str(err.value_unsafe(), "message")};
  return Error{static_cast<int>(get_i64(e, "code", errc::protocol)), get_str(e, "message", "refused")};
}

bool get_array(simdjson::dom::element e, const char* key, simdjson::dom::array& out) {
  auto v = e[key];
  if (v.error() || !v.value_unsafe().is_array()) return false;
  out = v.value_unsafe().get_array().value_unsafe();
  return true;
}

bool get_object(simdjson::dom::element e, const char* key, simdjson::dom::object& out) {
  auto v = e[key];
  if (v.error() || !v.value_unsafe().is_object()) return false;
  out = v.value_unsafe().get_object().value_unsafe();
  return true;
}

std::string get_str(simdjson::dom::element e, const char* key, std::string fallback) {
  auto v = e[key];
  if (v.error() || !v.value_unsafe().is_string()) return fallback;
  return std::string(v.value_unsafe().get_string().value_unsafe());
}

int64_t get_i64(simdjson::dom::element e, const char* key, int64_t fallback) {
  auto v = e[key];
  if (v.error()) return fallback;
  auto i = v.value_unsafe().get_int64();
  if (!i.error()) return i.value_unsafe();
  auto d = v.value_unsafe().get_double();
  return d.error() ? fallback : static_cast<int64_t>(d.value_unsafe());
}

uint64_t get_u64(simdjson::dom::element e, const char* key, uint64_t fallback) {
  auto v = e[key];
  if (v.error()) return fallback;
  auto u = v.value_unsafe().get_uint64();
  return u.error() ? fallback : u.value_unsafe();
}

bool get_bool(simdjson::dom::element e, const char* key, bool fallback) {
  auto v = e[key];
  if (v.error()) return fallback;
  auto b = v.value_unsafe().get_bool();
  return b.error() ? fallback : b.value_unsafe();
}

std::vector<std::string> get_strs(simdjson::dom::element e, const char* key) {
  std::vector<std::string> out;
  simdjson::dom::array arr;
  if (!get_array(e, key, arr)) return out;
  for (auto x : arr)
    if (x.is_string()) out.emplace_back(x.get_string().value_unsafe());
  return out;
}

std::string get_raw(simdjson::dom::element e, const char* key) {
  auto v = e[key];
  if (v.error()) return {};
  return to_json(v.value_unsafe());
}

std::string to_json(simdjson::dom::element e) {
  std::string out;
  js::append_value(out, e);
  return out;
}

simdjson::dom::parser& thread_parser() {
  thread_local simdjson::dom::parser p;
  return p;
}

}  // namespace siomq::json
