// Raw spans of JSON values, so that a value (a PRODUCE's `message`) can be spliced into another document
// without being parsed into a tree and written again. The text is expected to be valid JSON (packets are
// validated when decoded); on malformed text these return an error and never read out of bounds.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "wire/result.h"

namespace siomq::json_spans {

// One member of an object: the key unescaped, the value as the raw text it was sent as.
struct Member {
  std::string key;
  std::string_view value;
};

// Where the value starting at s[pos] (leading whitespace allowed) ends: one past its last byte.
Result<size_t> value_end(std::string_view s, size_t pos = 0);
// The members of an object, in order (duplicates kept, as sent).
Result<std::vector<Member>> object_members(std::string_view object);
// The raw value of member `name` (the last duplicate wins, as JSON.parse reads it); empty when absent.
inline std::string_view last_member(const std::vector<Member>& members, std::string_view name) {
  for (auto it = members.rbegin(); it != members.rend(); ++it) {
    if (it->key == name) return it->value;
  }
  return {};
}
// The elements of an array, in order.
Result<std::vector<std::string_view>> array_elements(std::string_view array);
// The text of a JSON string literal (quotes included), unescaped to UTF-8.
Result<std::string> unescape(std::string_view literal);
// JavaScript truthiness of a raw JSON value; an empty view (an absent field) is falsy.
bool truthy(std::string_view value);

}  // namespace siomq::json_spans
