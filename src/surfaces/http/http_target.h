// A request target of the HTTP publish surface (/pub, /sub, /sub-ticket) read into its percent-decoded
// path segments and query parameters, with every part bounded: the parser every such request goes
// through first, so that a hostile target is refused whole before anything acts on it.
//
// Pure and linear in the target's length; no state. Fuzzed by tests/fuzz/fuzz_http_target.cc.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "wire/result.h"

namespace siomq::surfaces::http {

inline constexpr size_t kMaxTargetBytes = 4096;
inline constexpr size_t kMaxSegments = 8;
inline constexpr size_t kMaxQueryParams = 16;

struct HttpTarget {
  std::vector<std::string> segments;  // "/pub/r/e" -> {"pub", "r", "e"}; empty segments are dropped
  std::vector<std::pair<std::string, std::string>> query;
  // The first value of `name`, or null.
  const std::string* param(std::string_view name) const;
};

// Refuses (400's message) a target longer than kMaxTargetBytes, not starting with '/', with more
// segments or parameters than allowed, with a bad %-escape, or whose decoded parts are not UTF-8 or
// hold control characters.
Result<HttpTarget> parse_target(std::string_view target);

// Whether `name` is one the reference refuses as a realm or event name (400): __proto__, constructor,
// prototype.
bool reserved_name(std::string_view name);

}  // namespace siomq::surfaces::http
