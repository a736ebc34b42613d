// JSON in and out for the client library's typed calls (internal). Out: an object written field by field
// with JSON.stringify's escaping. In: fields of a parsed simdjson element, with defaults for what is
// absent, so that a newer server's extra or missing fields do not break an older client.
#pragma once

#include <simdjson.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "siomq/result.h"

namespace siomq::json {

class Object {
 public:
  Object& str(std::string_view key, std::string_view value);
  Object& str_if(std::string_view key, std::string_view value) { return value.empty() ? *this : str(key, value); }
  Object& num(std::string_view key, int64_t value);
  Object& num(std::string_view key, double value);
  Object& boolean(std::string_view key, bool value);
  Object& raw(std::string_view key, std::string_view json);  // a value already written as JSON
  Object& strings(std::string_view key, const std::vector<std::string>& values);
  Object& string_map(std::string_view key, const std::vector<std::pair<std::string, std::string>>& values);
  std::string done();  // the text, closed; the Object is spent
  const std::string& text() const { return out_; }

 private:
  void key(std::string_view k);
  std::string out_ = "{";
};

// The first element of an ack's argument array, parsed; errc::protocol when there is none.
// `parser` owns the result.
Result<simdjson::dom::element> first_arg(simdjson::dom::parser& parser, std::string_view args_json);
// The calling thread's parser, for answers read on the io thread (a result lives until its next parse).
simdjson::dom::parser& thread_parser();

// A bus-style answer: {"ok":true,...} is the element; {"ok":false,"error":{code,message}} an Error.
Result<simdjson::dom::element> ok_answer(simdjson::dom::parser& parser, std::string_view args_json);

// The member `key` as an array / object: false (and `out` untouched) when absent or of another type.
bool get_array(simdjson::dom::element e, const char* key, simdjson::dom::array& out);
bool get_object(simdjson::dom::element e, const char* key, simdjson::dom::object& out);

std::string get_str(simdjson::dom::element e, const char* key, std::string fallback = {});
int64_t get_i64(simdjson::dom::element e, const char* key, int64_t fallback = 0);
uint64_t get_u64(simdjson::dom::element e, const char* key, uint64_t fallback = 0);
bool get_bool(simdjson::dom::element e, const char* key, bool fallback = false);
std::vector<std::string> get_strs(simdjson::dom::element e, const char* key);
// A member written back as JSON text ("" when absent).
std::string get_raw(simdjson::dom::element e, const char* key);
std::string to_json(simdjson::dom::element e);

}  // namespace siomq::json
