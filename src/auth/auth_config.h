// The `auth` block of the settings (tyo-mq §6.1, camelCase aliases accepted) and the realm predicates
// every authentication and gate decision reads. Plain data: a new document gives a new AuthConfig.
#pragma once

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace siomq::auth {

// The realm every realm's messages are mirrored to (broker::Broker::kMirrorRealm). Only an admin
// credential reaches it; it is never declared, configured or created.
inline constexpr std::string_view kAllRealms = "*";
inline constexpr size_t kMaxRealmName = 256;

// Why `name` cannot be a realm that a client declares or a setting configures: empty, longer than
// kMaxRealmName bytes, holding a control character (NUL included), or the reserved "*". nullopt when
// it can. Linear in the name.
std::optional<std::string> bad_realm_name(std::string_view name);
// The five roles of §6.5.
bool known_role(std::string_view role);

struct TokenEntry {
  std::string token;
  std::string realm = "default";
  std::string role = "both";
  std::string client_id, client_name;
};

struct ExternalValidator {
  std::string realm_prefix;
  std::string auth_url;
  std::string auth_secret;
};

struct ManagementToken {
  std::string token;
  std::string realm_prefix;
  bool ephemeral_only = false;
  std::optional<int64_t> max_ttl_ms;
};

struct RealmConfig {
  std::optional<bool> required;
  std::optional<std::string> key;  // the pre-shared key (`key` or `preshared_key`)
  std::optional<bool> require_key;
  std::optional<bool> require_acceptance;
  std::optional<std::string> manager_key;
  std::optional<bool> allow_anonymous;
  std::optional<bool> allow_anonymous_consumers;  // a realm that requires auth admits token-less consumers
  std::string e2ee;  // "", "optional" or "required"
  bool ephemeral = false;  // `ephemeral` or `temporary`
  std::optional<int64_t> expires_at_ms;
  std::string auth_url, auth_secret;
};

struct AuthConfig {
  bool enabled = false;
  std::vector<TokenEntry> tokens;
  std::string jwt_secret;
  std::string auth_url, auth_secret;
  std::vector<ExternalValidator> external_validators;
  std::vector<ManagementToken> management_tokens;
  std::map<std::string, RealmConfig> realms;
  std::string env_file;
  std::string admin_token_env = "TYO_MQ_ADMIN_TOKEN";
  bool auto_admin_token = true;
  std::optional<int64_t> ephemeral_realm_ttl_ms;
  int64_t validator_timeout_ms = 5000;  // an external validator's answer is awaited this long

  const RealmConfig* realm(std::string_view name) const;
  // §6.1's predicates; false while auth is off.
  bool auth_required(std::string_view realm) const;
  bool key_required(std::string_view realm) const;
  bool acceptance_required(std::string_view realm) const;
  // §6.6: whether ANONYMOUS may name `realm`: the realm's allow_anonymous, else only "default". Read
  // whether auth is on or off.
  bool anonymous_allowed(std::string_view realm) const;
  // Whether a socket without a token may consume in `realm` (the pre-shared key, where one is required,
  // is checked besides). An unconfigured realm keeps the reference's rule (yes); a configured realm that
  // requires auth says no unless it sets allow_anonymous_consumers. True while auth is off.
  bool anonymous_consumers_allowed(std::string_view realm) const;
  // Whether a static token grants role admin in realm "*" (else the server may make one at start-up).
  bool has_admin_token() const;
};

// Reads the block (snake_case keys or their camelCase aliases); throws std::runtime_error naming the key
// on a wrong type. A null block (none in the file) is "off".
AuthConfig parse_auth(const nlohmann::json& block);

// roleAllows(role, list): admin, manager and both pass every gate; otherwise the role must be listed.
bool role_allows(std::string_view role, std::initializer_list<std::string_view> allowed);

}  // namespace siomq::auth
