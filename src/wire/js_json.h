// JSON written exactly as JavaScript's JSON.stringify writes it: integer-like keys first in ascending
// order, then the others in insertion order (the last duplicate wins), ECMAScript number formatting.
// Needed wherever a client compares or hashes text that a Node.js server would have produced.
#pragma once

#include <simdjson.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "wire/result.h"

namespace siomq::js {

// ECMAScript Number::toString for a finite double; NaN and infinities give "null" as in JSON.
std::string number(double v);
// `v.toString(36)` for a non-negative integer: the time and random parts of tyo-mq's ids.
std::string base36(uint64_t v);
void append_base36(std::string& out, uint64_t v);
// Date.prototype.toISOString of Unix ms: "2026-12-02T13:35:15.123Z".
std::string iso_date(int64_t unix_ms);
// The Unix ms of text in exactly that shape; nullopt for anything else.
std::optional<int64_t> parse_iso_date(std::string_view text);
// True when `key` is an array index ("0", "1", … up to 2^32-2, no leading zeros).
bool is_array_index(std::string_view key);

// The order object keys are written in: JSON.stringify's own, or sorted by UTF-16 code units as
// tyo-mq's stableStringify does (`Object.keys(o).sort()`), for signatures over canonical JSON.
enum class KeyOrder { as_stringify, sorted };

// Appends the value as JSON.stringify(value) would (with `sorted`, as stableStringify would).
void append_value(std::string& out, const simdjson::dom::element& value, KeyOrder order = KeyOrder::as_stringify);
// JSON.stringify(JSON.parse(text)).
Result<std::string> normalize(std::string_view json);
// stableStringify(JSON.parse(text)): compact, keys sorted by UTF-16 code units at every depth (tyo-mq §8.1).
Result<std::string> canonical(std::string_view json);
// a < b in UTF-16 code-unit order (JavaScript's default string sort), for UTF-8 strings.
bool utf16_less(std::string_view a, std::string_view b);

// simdjson holds numbers in 64 bits; JSON.parse takes any magnitude. Returns a copy of `json` whose
// numbers that do not fit are rewritten as the double JavaScript holds for them ("1e400" becomes null,
// as JSON.stringify writes Infinity), or nullopt when nothing needs rewriting or a number is malformed.
std::optional<std::string> tame_numbers(std::string_view json);

// The deepest nesting any JSON from a client may have (simdjson's own default, checked iteratively).
inline constexpr size_t kMaxDepth = 1024;

// Checks `json` as a packet's JSON is checked when it arrives: one JSON.parse-able value, valid UTF-8
// (so no lone surrogate written as raw bytes), at most kMaxDepth deep. In time linear in its size and
// without recursion. Every text relayed or stored as JSON passes this, whatever route it came by (a
// packet, a payload sent as a JSON string, the joined pieces of PRODUCE_CHUNK).
Status validate(std::string_view json);

// Parses as JSON.parse would: when simdjson refuses a number, parses the tamed copy kept in `storage`.
simdjson::simdjson_result<simdjson::dom::element> parse(simdjson::dom::parser& parser, std::string_view json,
                                                        std::string& storage);

}  // namespace siomq::js
