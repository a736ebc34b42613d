// The decisions of tyo-mq §6.2 (AUTHENTICATION), §6.3 (the gate on protocol events) and §6.4 (which
// check a token gets), with §0 rows 8 and 9. Pure functions of the configuration and the socket's
// state: the surface applies the outcome and does the I/O (an external validator's HTTP call).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>

#include "auth/auth_config.h"
#include "wire/result.h"

namespace siomq::auth {

// What a socket holds: its realm and role, and whether it came from the gate (implicit) rather
// than from AUTHENTICATION. A later AUTHENTICATION replaces an implicit grant (§0 row 9).
struct Grant {
  std::string realm;
  std::string role;
  bool implicit = false;
};

// The fields of an AUTHENTICATION payload that were present.
struct AuthRequest {
  std::optional<std::string> token;  // non-empty strings only
  std::optional<std::string> realm;  // non-empty strings only
  std::optional<std::string> role;
  bool has_key = false;
  std::optional<std::string> key;  // when `key` is a string (anything else never equals a realm key)
};

// An external validator to ask (§6.4 step 5): the first matching of the realm's own, the longest
// prefix, the global one.
struct ExternalCheck {
  enum class Scope { realm, prefix, global };
  std::string url;
  std::string secret;
  std::optional<std::string> realm;        // sent as `realm` in the request
  Scope scope = Scope::global;
  std::string scope_realm;                 // Scope::realm: the one realm; Scope::prefix: the prefix
};

struct AuthOutcome {
  enum class Kind { granted, refused, ask_external } kind = Kind::refused;
  Grant grant;                 // granted
  int code = 401;              // refused
  std::string message;         // refused
  ExternalCheck external;      // ask_external
};

// §6.2, steps 1-8 (step 8's external validator is returned as ask_external). `current` is the
// socket's grant, `now_s` Unix seconds for JWT times.
AuthOutcome authenticate(const AuthConfig& config, const AuthRequest& request, const std::optional<Grant>& current,
                         int64_t now_s);

// §6.4 steps 2-5 for `token`: per-realm JWT, global jwt_secret, static tokens, else an external check
// chosen by `realm_hint` (the declared realm, else the JWT's realm claim), else refused.
AuthOutcome check_token(const AuthConfig& config, std::string_view token, const std::optional<std::string>& declared_realm,
                        int64_t now_s);

// What an external validator's answer {realm, role} may grant: a realm's own validator exactly that
// realm, a prefix validator only realms within its prefix, the global one (the operator's) any realm —
// and "*" only to role admin from the global one. The role must be one of §6.5's five, the realm a
// valid name. The error says why the answer was not trusted.
Result<Grant> external_grant(const ExternalCheck& check, std::string realm, std::string role);

struct GateOutcome {
  bool allowed = false;
  std::optional<Grant> new_grant;  // an implicit grant to keep on the socket
  int code = 401;
  std::string message;  // AUTH_FAIL's, when refused
};

// §6.3 for `event` whose allowed roles are `roles`; `pending_realm` is the realm a failed or partial
// AUTHENTICATION declared.
GateOutcome gate(const AuthConfig& config, const std::optional<Grant>& current, const std::optional<std::string>& pending_realm,
                 std::string_view event, std::initializer_list<std::string_view> roles);

}  // namespace siomq::auth
