// Reading one request object field by field: the fields a request names, each checked for its type and
// range, and a 400 whose message names the first bad field ("<field>: <why>"). Unknown fields are ignored
// (as NATS and JetStream do); when a key repeats, the last one counts (as JSON.parse does).
//
// The object must be valid JSON (from a validated packet or our own store); every read is linear in the
// object and never recursive (nested values are skipped by json_spans). Pure, any thread.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "wire/result.h"

namespace siomq::json {

inline constexpr int kBadRequest = 400;

class Fields {
 public:
  // Reads the members of `object` whose keys are in `names`.
  Fields(std::string_view object, std::initializer_list<std::string_view> names);

  // The raw JSON of a field, nullopt when absent (or null).
  std::optional<std::string_view> raw(std::string_view name) const;
  bool has(std::string_view name) const { return raw(name).has_value(); }

  // A string field; absent: nullopt, or 400 when `required`. Longer than `max_bytes`: 400.
  std::optional<std::string> string(std::string_view name, bool required = false, size_t max_bytes = 1024);
  // An integer field within [min, max]; anything else (a fraction, a string, out of range) is 400.
  std::optional<int64_t> integer(std::string_view name, int64_t min, int64_t max);
  std::optional<bool> boolean(std::string_view name);
  // An array of strings, each at most `max_bytes`, at most `max_items` of them.
  std::optional<std::vector<std::string>> strings(std::string_view name, size_t max_items, size_t max_bytes = 1024);
  // An array of integers within [min, max], at most `max_items`.
  std::optional<std::vector<int64_t>> integers(std::string_view name, size_t max_items, int64_t min, int64_t max);
  // One of `choices` (a string field); nullopt when absent or refused.
  std::optional<std::string> choice(std::string_view name, std::initializer_list<std::string_view> choices);

  // The first error met, if any; later reads do nothing once there is one.
  const std::optional<Error>& error() const { return error_; }
  void fail(std::string_view name, std::string_view why);

 private:
  std::vector<std::pair<std::string_view, std::string_view>> found_;  // (name, raw value)
  std::optional<Error> error_;
};

// A strict JSON integer (no fraction, no exponent, no leading zero, within int64).
std::optional<int64_t> parse_integer(std::string_view raw);

}  // namespace siomq::json
