// How every record of the store is written as one JSON object and read back. Strings are escaped as
// JSON.stringify escapes them (any bytes round-trip, NUL included), raw JSON values (payloads, specs,
// configs) are spliced as they are, bytes are base64 strings, integers stay within 2^53 (what a
// JavaScript number, and so any JSON reader, holds exactly) and times are Unix ms.
//
// Reading trusts nothing: the text may come from a damaged disk or another program's redis keys. Every
// check runs in time linear in the text, without recursion. Used by the codecs of the record families
// (rows.cc, stream_log.cc, consumer_state.cc, directory.cc) only.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "wire/result.h"

namespace siomq::store::record_json {

inline constexpr uint64_t kMaxInteger = uint64_t{1} << 53;

// `"key":`
void append_key(std::string& out, std::string_view key);
void append_integer(std::string& out, uint64_t v);
// Negative times are outside the format (reading refuses them); they are written as they are, so a
// record holding one fails to load rather than load wrong.
void append_time(std::string& out, int64_t ms);
void append_string(std::string& out, std::string_view s);
// A JSON string of the base64 of `bytes`.
void append_base64(std::string& out, std::string_view bytes);
void append_base64_array(std::string& out, const std::vector<std::string>& items);

// A JSON integer in [0, 2^53] written plainly (no sign, fraction, exponent or leading zero).
std::optional<uint64_t> parse_integer(std::string_view text);

inline constexpr size_t kMaxFields = 12;

// The members of one record object, read field by field. Every member must be one of the record's
// fields, at most once, and the object must be the whole text. A getter that finds its field missing or
// malformed records the first error and returns an empty value; the caller checks error() once at the
// end. `names` must outlive the object (the codecs pass static arrays); the values view `text`.
class Fields {
 public:
  Fields(std::string_view what, std::string_view text, std::span<const std::string_view> names);

  std::string string(std::string_view name);
  // A string or null (nullopt).
  std::optional<std::string> optional_string(std::string_view name);
  uint64_t integer(std::string_view name);
  int64_t time(std::string_view name);
  // A time or null (0).
  int64_t optional_time(std::string_view name);
  // The raw text of a JSON object (parsed by simdjson: valid UTF-8, bounded depth, no recursion).
  std::string object(std::string_view name);
  // The raw text of a JSON object, or null (nullopt).
  std::optional<std::string> optional_object(std::string_view name);
  // The raw text of any JSON value, checked by js::validate.
  std::string json_value(std::string_view name);
  std::string base64_string(std::string_view name);
  std::vector<std::string> base64_strings(std::string_view name);
  // The raw text of a member, for a codec that reads a structure of its own; nullopt (and an error)
  // when it is missing.
  std::optional<std::string_view> raw(std::string_view name);

  // Records `problem` with the field (the first error wins).
  void fail_field(std::string_view name, std::string_view problem);
  void fail(std::string message);
  const std::optional<Error>& error() const { return error_; }

 private:
  std::optional<std::string_view> get(std::string_view name);

  std::string_view what_;
  std::span<const std::string_view> names_;  // empty when the object was refused
  std::array<std::optional<std::string_view>, kMaxFields> values_;
  std::optional<Error> error_;
};

}  // namespace siomq::store::record_json
