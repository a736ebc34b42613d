// Reading an HTTP API request (tyo-mq §9), without sockets, so that it can be fuzzed: the path split into
// its segments, a path parameter percent-decoded, the bearer token of an Authorization header, and the
// JSON body of POST /api/realms checked for its shape. Linear time, no recursion, no allocation beyond the
// result; every function takes untrusted bytes.
#pragma once

#include <nlohmann/json.hpp>

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "wire/result.h"

namespace siomq::surfaces::http {

// More segments than any route has: a longer path matches nothing (and is not split further).
inline constexpr size_t kMaxPathSegments = 8;
// The largest POST /api/realms body read (the reference's 64 KiB); a larger one is a 400.
inline constexpr size_t kMaxRealmRequestBody = 64 * 1024;

// The raw segments of the target's path (before '?' or '#'), without the leading '/': "/api/stats" gives
// {"api", "stats"}, "/" gives {""}. nullopt when the target does not start with '/' or has more than
// kMaxPathSegments segments. The views point into `target`.
std::optional<std::vector<std::string_view>> path_segments(std::string_view target);

// A path segment with its %XX escapes decoded ('+' stays '+': that rule is the query's). nullopt on a
// malformed escape or a decoded control character (NUL included).
std::optional<std::string> decode_segment(std::string_view segment);

// The token of "Bearer <token>" (the scheme in any case, one or more spaces or tabs, the token up to the
// end with trailing white space removed); nullopt for any other header.
std::optional<std::string_view> bearer_token(std::string_view authorization);

// POST /api/realms' body, {realm, manager_key, ephemeral?, ttl?}, checked for its shape: a JSON object at
// most kMaxRealmRequestBody bytes; realm and manager_key non-empty strings; ephemeral a boolean; ttl a
// positive number or a string (its format is the management commands' realm duration, checked by the
// caller). Unknown keys are ignored, as the reference does. A 400 with the reason otherwise.
struct RealmRequest {
  std::string realm;
  std::string manager_key;
  std::optional<bool> ephemeral;
  std::optional<nlohmann::json> ttl;  // a number or a string, as sent
};
Result<RealmRequest> parse_realm_request(std::string_view body);

}  // namespace siomq::surfaces::http
