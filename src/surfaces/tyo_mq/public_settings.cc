#include "surfaces/tyo_mq/public_settings.h"

#include <string>
#include <string_view>

#include "auth/hmac.h"
#include "surfaces/remote/relay_settings.h"

namespace siomq::surfaces {
namespace {

using nlohmann::json;

// The snake_case name of a camelCase key ("managementTokens" → "management_tokens"): every alias the
// settings parser accepts is the camelCase form of its snake_case key.
std::string snake_case(std::string_view key) {
  std::string out;
  for (char c : key) {
    if (c >= 'A' && c <= 'Z') {
      out.push_back('_');
      out.push_back(static_cast<char>(c - 'A' + 'a'));
    } else {
      out.push_back(c);
    }
  }
  return out;
}

// An object with its camelCase aliases renamed to the snake_case keys, as the parser reads them: the
// snake_case key wins where both are present (the alias is dropped, as the parser ignores it). Masking
// then needs to know the snake_case names only, and no alias can carry a secret past it.
json with_snake_keys(const json& o) {
  if (!o.is_object()) return o;
  json out = json::object();
  for (const auto& [k, v] : o.items()) {
    std::string snake = snake_case(k);
    if (snake == k || !o.contains(snake)) out[snake] = v;
  }
  return out;
}

// "redis://user:password@host" with the password replaced.
json masked_url(const json& url) {
  if (!url.is_string()) return url;
  std::string u = url.get<std::string>();
  size_t scheme = u.find("://"), at = u.rfind('@');
  if (scheme == std::string::npos || at == std::string::npos || at < scheme) return url;
  size_t colon = u.find(':', scheme + 3);
  if (colon == std::string::npos || colon > at) return url;
  return u.substr(0, colon + 1) + "<configured>" + u.substr(at);
}

}  // namespace

// A realm's settings as replies show them: secrets only as "…_configured".
json public_realm(const json& raw) {
  json out = json::object();
  if (!raw.is_object()) return out;
  const json cfg = with_snake_keys(raw);
  for (const auto& [k, v] : cfg.items()) {
    if (k == "manager_key" || k == "managerKey") out["manager_key_configured"] = v.is_string() && !v.get<std::string>().empty();
    else if (k == "key" || k == "preshared_key" || k == "presharedKey")
      out["key_configured"] = v.is_string() && !v.get<std::string>().empty();
    else if (k == "auth_secret" || k == "authSecret") out["auth_secret_configured"] = v.is_string() && !v.get<std::string>().empty();
    else out[k] = v;
  }
  return out;
}

json token_view(const json& t) {
  return {{"realm", t.value("realm", "default")},
          {"role", t.value("role", "both")},
          {"client_id", t.contains("client_id") ? t["client_id"] : json()},
          {"client_name", t.contains("client_name") ? t["client_name"] : json()},
          {"token_hash", auth::sha256_hex(t.value("token", ""))}};
}

// The `auth` block as replies show it: tokens as hashes, secrets as flags or "<configured>".
json public_auth(const json& raw) {
  json a = raw.is_object() ? with_snake_keys(raw) : json::object();
  for (const char* list : {"tokens", "management_tokens", "external_validators"}) {
    if (a.contains(list) && a[list].is_array())
      for (auto& entry : a[list]) entry = with_snake_keys(entry);
  }
  if (a.contains("tokens") && a["tokens"].is_array()) {
    json tokens = json::array();
    for (const auto& t : a["tokens"]) tokens.push_back(token_view(t));
    a["tokens"] = tokens;
  }
  for (const char* k : {"jwt_secret", "auth_secret"}) {
    if (a.contains(k)) a[k] = "<configured>";
  }
  if (a.contains("management_tokens") && a["management_tokens"].is_array()) {
    json tokens = json::array();
    for (const auto& t : a["management_tokens"]) {
      json v = {{"realm_prefix", t.value("realm_prefix", "")}, {"token_hash", auth::sha256_hex(t.value("token", ""))}};
      if (t.contains("ephemeral_only")) v["ephemeral_only"] = t["ephemeral_only"];
      if (t.contains("max_ttl")) v["max_ttl"] = t["max_ttl"];
      tokens.push_back(v);
    }
    a["management_tokens"] = tokens;
  }
  if (a.contains("external_validators") && a["external_validators"].is_array()) {
    for (auto& v : a["external_validators"]) {
      if (v.is_object() && v.contains("auth_secret")) {
        v.erase("auth_secret");
        v["auth_secret_configured"] = true;
      }
    }
  }
  if (a.contains("realms") && a["realms"].is_object()) {
    for (auto& [name, cfg] : a["realms"].items()) cfg = public_realm(cfg);
  }
  return a;
}

// §8.2's public settings are the `auth` block itself (its keys at the top level, as a tyo-mq manager
// reads `settings.realms.<r>` and `settings.management_tokens`), plus `persistence` and `namespaces`.
// The other blocks of the settings file (limits, storage, http_api, …) are not part of them.
json public_settings(const json& doc) {
  json out = public_auth(doc.is_object() && doc.contains("auth") ? doc["auth"] : json::object());
  json storage_options = doc.is_object() && doc.contains("storage_options") ? with_snake_keys(doc["storage_options"])
                                                                             : json::object();
  if (storage_options.is_object()) {
    if (storage_options.contains("url")) storage_options["url"] = masked_url(storage_options["url"]);
    if (storage_options.contains("password")) storage_options["password"] = "<configured>";
  }
  out["persistence"] = {{"storage", doc.is_object() ? doc.value("storage", "file") : "file"},
                        {"storage_options", storage_options}};
  out["namespaces"] = remote::attached_namespaces(doc);  // the relay namespaces attached: [{name, type}]
  return out;
}

}  // namespace siomq::surfaces
