#include "auth/auth_config.h"

#include <nlohmann/json.hpp>

#include <stdexcept>

#include "wire/durations.h"

namespace siomq::auth {
namespace {

using nlohmann::json;

// The value under `snake` or its camelCase alias, or null.
const json* find(const json& o, const char* snake, const char* camel = nullptr) {
  if (auto it = o.find(snake); it != o.end()) return &*it;
  if (camel) {
    if (auto it = o.find(camel); it != o.end()) return &*it;
  }
  return nullptr;
}

[[noreturn]] void wrong(const std::string& where, const char* what) {
  throw std::runtime_error(where + " must be " + what);
}

std::optional<bool> flag(const json& o, const std::string& where, const char* snake, const char* camel = nullptr) {
  const json* v = find(o, snake, camel);
  if (!v || v->is_null()) return std::nullopt;
  if (!v->is_boolean()) wrong(where + "." + snake, "a boolean");
  return v->get<bool>();
}

std::optional<std::string> text(const json& o, const std::string& where, const char* snake, const char* camel = nullptr) {
  const json* v = find(o, snake, camel);
  if (!v || v->is_null()) return std::nullopt;
  if (!v->is_string()) wrong(where + "." + snake, "a string");
  return v->get<std::string>();
}

// A duration: seconds as a number, or a string with ms/s/m/h/d (§0 row 7).
std::optional<int64_t> duration(const json& o, const std::string& where, const char* snake, const char* camel = nullptr) {
  const json* v = find(o, snake, camel);
  if (!v || v->is_null()) return std::nullopt;
  auto ms = durations::parse_duration_ms(v->dump());
  if (!(v->is_number() || v->is_string()) || !ms) wrong(where + "." + snake, "a positive duration (seconds or \"12h\")");
  return ms;
}

const json& array(const json& o, const std::string& where, const char* snake, const char* camel = nullptr) {
  static const json empty = json::array();
  const json* v = find(o, snake, camel);
  if (!v || v->is_null()) return empty;
  if (!v->is_array()) wrong(where + "." + snake, "an array");
  return *v;
}

}  // namespace

std::optional<std::string> bad_realm_name(std::string_view name) {
  if (name.empty()) return "a realm name cannot be empty";
  if (name == kAllRealms) return "the realm '*' is reserved";
  if (name.size() > kMaxRealmName) return "a realm name is at most 256 bytes";
  for (char c : name) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) return "a realm name cannot hold control characters";
  }
  return std::nullopt;
}

bool known_role(std::string_view role) {
  return role == "producer" || role == "consumer" || role == "both" || role == "manager" || role == "admin";
}

AuthConfig parse_auth(const json& block) {
  AuthConfig c;
  if (block.is_null()) return c;
  if (!block.is_object()) wrong("auth", "an object");
  const std::string a = "auth";
  c.enabled = flag(block, a, "enabled").value_or(false);
  int i = 0;
  for (const json& t : array(block, a, "tokens")) {
    std::string where = a + ".tokens[" + std::to_string(i++) + "]";
    if (!t.is_object()) wrong(where, "an object");
    TokenEntry e;
    auto token = text(t, where, "token");
    if (!token || token->empty()) wrong(where + ".token", "a non-empty string");
    e.token = *token;
    e.realm = text(t, where, "realm").value_or("default");
    // "*" only for admin tokens: the mirror of every realm is an admin's view.
    if (e.realm != kAllRealms || text(t, where, "role").value_or("") != "admin") {
      if (auto why = bad_realm_name(e.realm)) throw std::runtime_error(where + ".realm: " + *why + " (\"*\" is for role admin)");
    }
    e.role = text(t, where, "role").value_or("both");
    e.client_id = text(t, where, "client_id", "clientId").value_or("");
    e.client_name = text(t, where, "client_name", "clientName").value_or("");
    c.tokens.push_back(std::move(e));
  }
  c.jwt_secret = text(block, a, "jwt_secret", "jwtSecret").value_or("");
  c.auth_url = text(block, a, "auth_url", "authUrl").value_or("");
  c.auth_secret = text(block, a, "auth_secret", "authSecret").value_or("");
  i = 0;
  for (const json& v : array(block, a, "external_validators", "externalValidators")) {
    std::string where = a + ".external_validators[" + std::to_string(i++) + "]";
    if (!v.is_object()) wrong(where, "an object");
    ExternalValidator e;
    e.realm_prefix = text(v, where, "realm_prefix", "realmPrefix").value_or("");
    e.auth_url = text(v, where, "auth_url", "authUrl").value_or("");
    if (e.auth_url.empty()) wrong(where + ".auth_url", "a non-empty string");
    e.auth_secret = text(v, where, "auth_secret", "authSecret").value_or("");
    c.external_validators.push_back(std::move(e));
  }
  i = 0;
  for (const json& m : array(block, a, "management_tokens", "managementTokens")) {
    std::string where = a + ".management_tokens[" + std::to_string(i++) + "]";
    if (!m.is_object()) wrong(where, "an object");
    ManagementToken e;
    auto token = text(m, where, "token");
    if (!token || token->empty()) wrong(where + ".token", "a non-empty string");
    e.token = *token;
    e.realm_prefix = text(m, where, "realm_prefix", "realmPrefix").value_or("");
    e.ephemeral_only = flag(m, where, "ephemeral_only", "ephemeralOnly").value_or(false);
    e.max_ttl_ms = duration(m, where, "max_ttl", "maxTtl");
    c.management_tokens.push_back(std::move(e));
  }
  if (const json* realms = find(block, "realms"); realms && !realms->is_null()) {
    if (!realms->is_object()) wrong("auth.realms", "an object");
    for (const auto& [name, r] : realms->items()) {
      std::string where = "auth.realms." + name;
      if (auto why = bad_realm_name(name)) throw std::runtime_error("auth.realms: " + *why);
      if (!r.is_object()) wrong(where, "an object");
      RealmConfig rc;
      rc.required = flag(r, where, "required");
      rc.key = text(r, where, "key");
      if (!rc.key) rc.key = text(r, where, "preshared_key", "presharedKey");
      rc.require_key = flag(r, where, "require_key", "requireKey");
      rc.require_acceptance = flag(r, where, "require_acceptance", "requireAcceptance");
      rc.manager_key = text(r, where, "manager_key", "managerKey");
      rc.allow_anonymous = flag(r, where, "allow_anonymous", "allowAnonymous");
      rc.allow_anonymous_consumers = flag(r, where, "allow_anonymous_consumers", "allowAnonymousConsumers");
      rc.e2ee = text(r, where, "e2ee").value_or("");
      rc.ephemeral = flag(r, where, "ephemeral").value_or(false) || flag(r, where, "temporary").value_or(false);
      if (const json* at = find(r, "expires_at", "expiresAt"); at && !at->is_null()) {
        if (!at->is_number()) wrong(where + ".expires_at", "a number (Unix ms)");
        rc.expires_at_ms = at->get<int64_t>();
      }
      rc.auth_url = text(r, where, "auth_url", "authUrl").value_or("");
      rc.auth_secret = text(r, where, "auth_secret", "authSecret").value_or("");
      c.realms.emplace(name, std::move(rc));
    }
  }
  c.env_file = text(block, a, "env_file", "envFile").value_or("");
  c.admin_token_env = text(block, a, "admin_token_env", "adminTokenEnv").value_or("TYO_MQ_ADMIN_TOKEN");
  c.auto_admin_token = flag(block, a, "auto_admin_token", "autoAdminToken").value_or(true);
  c.ephemeral_realm_ttl_ms = duration(block, a, "ephemeral_realm_ttl", "ephemeralRealmTtl");
  if (auto t = duration(block, a, "validator_timeout", "validatorTimeout")) c.validator_timeout_ms = *t;
  return c;
}

const RealmConfig* AuthConfig::realm(std::string_view name) const {
  auto it = realms.find(std::string(name));
  return it == realms.end() ? nullptr : &it->second;
}

bool AuthConfig::auth_required(std::string_view name) const {
  if (!enabled) return false;
  const RealmConfig* r = realm(name);
  return r && r->required ? *r->required : true;
}

bool AuthConfig::key_required(std::string_view name) const {
  if (!enabled) return false;
  const RealmConfig* r = realm(name);
  if (!r) return false;  // an unconfigured realm needs no key
  return r->require_key ? *r->require_key : r->key.has_value() && !r->key->empty();
}

bool AuthConfig::acceptance_required(std::string_view name) const {
  if (!enabled) return false;
  const RealmConfig* r = realm(name);
  return r && r->require_acceptance ? *r->require_acceptance : auth_required(name);
}

bool AuthConfig::anonymous_allowed(std::string_view name) const {
  const RealmConfig* r = realm(name);
  if (r && r->allow_anonymous) return *r->allow_anonymous;
  return name == "default";
}

bool AuthConfig::anonymous_consumers_allowed(std::string_view name) const {
  if (!enabled) return true;
  const RealmConfig* r = realm(name);
  if (!r) return true;
  if (r->allow_anonymous_consumers) return *r->allow_anonymous_consumers;
  return !auth_required(name) || key_required(name);
}

bool AuthConfig::has_admin_token() const {
  for (const auto& t : tokens) {
    if (t.realm == "*" && t.role == "admin") return true;
  }
  return false;
}

bool role_allows(std::string_view role, std::initializer_list<std::string_view> allowed) {
  if (role == "admin" || role == "manager" || role == "both") return true;
  for (auto a : allowed) {
    if (a == role) return true;
  }
  return false;
}

}  // namespace siomq::auth
