// JSON written exactly as JavaScript's JSON.stringify writes it: integer-like keys first in ascending
// order, then the others in insertion order (the last duplicate wins), ECMAScript number formatting.
// Needed wherever a client compares or hashes text that a Node.js server would have produced.
#pragma once

#include <string>
#include <string_view>

#include "wire/result.h"

namespace simdjson::dom {
class element;
}

namespace siomq::js {

// ECMAScript Number::toString for a finite double; NaN and infinities give "null" as in JSON.
std::string number(double v);
// True when `key` is an array index ("0", "1", … up to 2^32-2, no leading zeros).
bool is_array_index(std::string_view key);

// Appends the value as JSON.stringify(value) would.
void append_value(std::string& out, const simdjson::dom::element& value);
// JSON.stringify(JSON.parse(text)).
Result<std::string> normalize(std::string_view json);

}  // namespace siomq::js
