// Reading one bus request object (bus.md §1, §8.19): the fields a request names, each checked for its
// type and range, and a 400 whose message names the first bad field. Unknown fields are ignored (as
// NATS and JetStream do); when a key repeats, the last one counts (as JSON.parse does).
//
// The object comes from a validated Socket.IO packet; every read is linear in the object and never
// recursive (nested values are skipped by json_spans). Views point into the object's text.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "wire/result.h"

namespace siomq::surfaces::bus {

inline constexpr int kBadRequest = 400;

// The request object of an event: its first argument after the name, which must be an object (§8.19:
// only `data` may be a JSON string, the request itself may not).
Result<std::string_view> request_object(std::string_view args);

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

  // The first error met, if any; later reads do nothing once there is one.
  const std::optional<Error>& error() const { return error_; }
  void fail(std::string_view name, std::string_view why);

 private:
  std::vector<std::pair<std::string_view, std::string_view>> found_;  // (name, raw value)
  std::optional<Error> error_;
};

// A message's data (§1): a binary attachment placeholder, or a JSON string whose UTF-8 bytes are the data.
Result<std::string> read_data(std::string_view raw, std::span<const std::string> attachments);
// A header (§1): an object of string values, at most kMaxHeaderEntries entries and kMaxHeaderBytes of
// text. Returned as canonical JSON text, empty for an empty object (keys as given, the last of a repeated key kept, in first-seen
// order); `msg_id` gets the value of a `Msg-Id` key (any case).
inline constexpr size_t kMaxHeaderEntries = 256;
inline constexpr size_t kMaxHeaderBytes = 64 * 1024;
Result<std::string> read_header(std::string_view raw, std::optional<std::string>* msg_id = nullptr);

// A strict JSON integer (no fraction, no exponent, within int64).
std::optional<int64_t> parse_integer(std::string_view raw);

}  // namespace siomq::surfaces::bus
