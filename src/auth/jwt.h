// HS256 JSON Web Tokens as tyo-mq §6.4 checks them: `alg` must be HS256, the signature is compared as
// the unpadded base64url text of HMAC-SHA256(secret, header "." payload) in constant time (a padded
// signature fails), `exp` ≤ now and `nbf` > now (seconds) reject, and `realm` and `role` must be there.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "wire/result.h"

namespace siomq::auth {

struct JwtGrant {
  std::string realm;
  std::string role;  // as the token says, not normalised
};

// Any failure is an Error (code 401) with the reason; the caller falls through to its next method.
Result<JwtGrant> verify_jwt(std::string_view token, std::string_view secret, int64_t now_s);
// The `realm` claim read without checking the signature: which realm's key to verify with.
std::optional<std::string> jwt_realm_hint(std::string_view token);
// An HS256 token of `payload_json` (tests and tools).
std::string sign_jwt(std::string_view payload_json, std::string_view secret);

}  // namespace siomq::auth
