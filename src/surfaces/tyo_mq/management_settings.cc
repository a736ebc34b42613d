#include "surfaces/tyo_mq/management_settings.h"

#include <algorithm>

#include "auth/auth_config.h"
#include "auth/hmac.h"
#include "surfaces/tyo_mq/context.h"
#include "surfaces/tyo_mq/management_fields.h"
#include "surfaces/tyo_mq/public_settings.h"

namespace siomq::surfaces::management {
namespace {

using nlohmann::json;

constexpr int64_t kDefaultRealmTtlMs = 86'400'000;

// "<n>[.<n>][ms|s|m|h|d]", at most 32 bytes: one pass, no backtracking (a regex recursed per digit).
bool plain_duration(std::string_view s) {
  if (s.empty() || s.size() > 32) return false;
  auto digits = [&](size_t i) {
    size_t j = i;
    while (j < s.size() && s[j] >= '0' && s[j] <= '9') ++j;
    return j;
  };
  size_t i = digits(0);
  if (i == 0) return false;
  if (i < s.size() && s[i] == '.') {
    size_t j = digits(i + 1);
    if (j == i + 1) return false;
    i = j;
  }
  std::string_view unit = s.substr(i);
  return unit.empty() || unit == "ms" || unit == "s" || unit == "m" || unit == "h" || unit == "d";
}

}  // namespace

Result<int64_t> realm_duration(const json& v, const char* what) {
  if (v.is_string() && !plain_duration(v.get<std::string>()))
    return bad(std::string(what) + " must be a positive duration such as 3600 or \"12h\"");
  auto ms = v.is_number() || v.is_string() ? durations::parse_duration_ms(v.dump()) : std::nullopt;
  if (!ms) return bad(std::string(what) + " must be a positive duration such as 3600 or \"12h\"");
  return *ms;
}

namespace {

json& realms_of(json& doc) {
  json& auth = doc["auth"];
  if (!auth.is_object()) auth = json::object();
  json& realms = auth["realms"];
  if (!realms.is_object()) realms = json::object();
  return realms;
}

// `camel`: the key's camelCase alias, which the settings file may use instead (auth_config.cc reads
// either, the snake_case one first). A file that has only the alias has it renamed before the edit:
// adding the snake_case key beside it would hide everything under the alias.
json& array_at(json& doc, const char* key, const char* camel = nullptr) {
  json& auth = doc["auth"];
  if (!auth.is_object()) auth = json::object();
  if (camel && !auth.contains(key) && auth.contains(camel)) {
    auth[key] = std::move(auth[camel]);
    auth.erase(camel);
  }
  json& a = auth[key];
  if (!a.is_array()) a = json::array();
  return a;
}

// The realm of `body.realm`, created when `create` and missing (404 otherwise).
Result<json*> realm_config(const json& body, json& doc, bool create, Outcome& out) {
  auto realm = text(body, {"realm"});
  if (!realm) return realm.error();
  if (!*realm || (*realm)->empty()) return bad("realm must be a non-empty string");
  json& realms = realms_of(doc);
  if (!realms.contains(**realm)) {
    if (!create) return make_error("Realm '" + **realm + "' not found", 404);
    realms[**realm] = json::object();
  }
  out.realm = **realm;
  json& cfg = realms[**realm];
  if (!cfg.is_object()) cfg = json::object();
  return &cfg;
}

Status set_flag_of_realm(const json& body, json& doc, Outcome& out, const char* field) {
  auto cfg = realm_config(body, doc, true, out);
  if (!cfg) return cfg.error();
  auto required = flag(body, {"required"});
  if (!required) return required.error();
  if (!*required) return bad("required must be a boolean");
  (**cfg)[field] = **required;
  return Ok{};
}

// "http(s)://host[/path]": a host without '/', '@' or white space, a path without white space, 2 KiB
// at most. One pass over the text.
bool valid_url(std::string_view url) {
  if (url.size() > 2048) return false;
  size_t at = url.starts_with("https://") ? 8 : url.starts_with("http://") ? 7 : 0;
  if (at == 0) return false;
  auto space = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; };
  size_t host = at;
  while (at < url.size() && url[at] != '/') {
    if (url[at] == '@' || space(url[at])) return false;
    ++at;
  }
  if (at == host) return false;
  for (; at < url.size(); ++at) {
    if (space(url[at])) return false;
  }
  return true;
}

}  // namespace

Status set_global_auth(const json& body, json& doc, Outcome&) {
  auto enabled = flag(body, {"enabled"});
  if (!enabled) return enabled.error();
  if (!*enabled) return bad("enabled must be a boolean");
  doc["auth"]["enabled"] = **enabled;
  return Ok{};
}

Status set_realm_auth(const json& body, json& doc, Outcome& out) { return set_flag_of_realm(body, doc, out, "required"); }

Status set_realm_acceptance(const json& body, json& doc, Outcome& out) {
  return set_flag_of_realm(body, doc, out, "require_acceptance");
}

Status add_realm(const json& body, json& doc, Outcome& out) {
  auto realm = text(body, {"realm"});
  if (!realm) return realm.error();
  if (!*realm || (*realm)->empty()) return bad("realm must be a non-empty string");
  if (auto why = auth::bad_realm_name(**realm)) return bad(*why);
  json& realms = realms_of(doc);
  if (realms.contains(**realm)) return make_error("Realm '" + **realm + "' already exists", 409);
  json cfg = json::object();
  auto required = flag(body, {"required"});
  if (!required) return required.error();
  cfg["required"] = required->value_or(true);
  auto manager_key = text(body, {"manager_key"});
  if (!manager_key) return manager_key.error();
  if (*manager_key && !(*manager_key)->empty()) cfg["manager_key"] = **manager_key;
  auto key = text(body, {"key", "preshared_key"});
  if (!key) return key.error();
  if (*key && !(*key)->empty()) cfg["key"] = **key;
  auto acceptance = flag(body, {"require_acceptance"});
  if (!acceptance) return acceptance.error();
  if (*acceptance) cfg["require_acceptance"] = **acceptance;
  auto e2ee = text(body, {"e2ee"});
  if (!e2ee) return e2ee.error();
  if (*e2ee) {
    if (**e2ee != "off" && **e2ee != "opportunistic" && **e2ee != "required")
      return bad("e2ee must be off, opportunistic or required");
    cfg["e2ee"] = **e2ee;
  }
  auto ephemeral = flag(body, {"ephemeral", "temporary", "disposable"});
  if (!ephemeral) return ephemeral.error();
  bool has_ttl = body.contains("ttl") && !body["ttl"].is_null();
  if (has_ttl || ephemeral->value_or(false)) {
    int64_t ttl = kDefaultRealmTtlMs;
    if (has_ttl) {
      auto t = realm_duration(body["ttl"], "ttl");
      if (!t) return t.error();
      ttl = *t;
    }
    cfg["ephemeral"] = true;
    cfg["expires_at"] = unix_ms() + ttl;
  }
  realms[**realm] = cfg;
  out.realm = **realm;
  return Ok{};
}

Status set_realm_lifetime(const json& body, json& doc, Outcome& out, const auth::Snapshot& snap, bool realm_signed) {
  auto cfg = realm_config(body, doc, true, out);
  if (!cfg) return cfg.error();
  auto ephemeral = flag(body, {"ephemeral", "temporary"});
  if (!ephemeral) return ephemeral.error();
  bool has_ttl = body.contains("ttl") && !body["ttl"].is_null();
  int64_t ttl = kDefaultRealmTtlMs;
  if (has_ttl) {
    auto t = realm_duration(body["ttl"], "ttl");
    if (!t) return t.error();
    ttl = *t;
  }
  bool make_ephemeral = ephemeral->value_or(true);
  if (realm_signed) {
    // A realm's own manager is held to the management tokens that own its name.
    for (const auto& m : snap.auth.management_tokens) {
      if (!out.realm.starts_with(m.realm_prefix)) continue;
      if (m.ephemeral_only) make_ephemeral = true;
      if (m.max_ttl_ms) ttl = std::min(ttl, *m.max_ttl_ms);
    }
  }
  json& c = **cfg;
  if (!make_ephemeral) {
    c.erase("ephemeral");
    c.erase("temporary");
    c.erase("expires_at");
    c.erase("expiresAt");
    return Ok{};
  }
  c["ephemeral"] = true;
  c["expires_at"] = unix_ms() + ttl;
  return Ok{};
}

Status set_realm_key(const json& body, json& doc, Outcome& out) {
  auto cfg = realm_config(body, doc, false, out);
  if (!cfg) return cfg.error();
  auto key = text(body, {"key", "preshared_key"});
  if (!key) return key.error();
  auto require = flag(body, {"require_key"});
  if (!require) return require.error();
  json& c = **cfg;
  for (const char* k : {"key", "preshared_key", "presharedKey"}) c.erase(k);
  if (*key && !(*key)->empty()) c["key"] = **key;
  if (*require) c["require_key"] = **require;
  return Ok{};
}

Status set_realm_e2ee(const json& body, json& doc, Outcome& out) {
  auto policy = text(body, {"e2ee", "policy"});
  if (!policy) return policy.error();
  if (!*policy || (**policy != "off" && **policy != "opportunistic" && **policy != "required"))
    return bad("e2ee must be off, opportunistic or required");
  auto cfg = realm_config(body, doc, true, out);
  if (!cfg) return cfg.error();
  (**cfg)["e2ee"] = **policy;
  return Ok{};
}

Status set_realm_manager_key(const json& body, json& doc, Outcome& out) {
  auto cfg = realm_config(body, doc, false, out);
  if (!cfg) return cfg.error();
  auto key = text(body, {"manager_key"});
  if (!key) return key.error();
  (**cfg).erase("managerKey");
  if (*key && !(*key)->empty()) (**cfg)["manager_key"] = **key;
  else (**cfg).erase("manager_key");
  return Ok{};
}

Status rename_realm(const json& body, json& doc, Outcome& out) {
  auto from = text(body, {"from"});
  if (!from) return from.error();
  auto to = text(body, {"to"});
  if (!to) return to.error();
  if (!*from || !*to || (*from)->empty() || (*to)->empty()) return bad("from and to must be non-empty strings");
  for (const auto& r : {**from, **to}) {
    if (r == "*" || r == "default") return bad("the realms '*' and 'default' cannot be renamed");
  }
  if (auto why = auth::bad_realm_name(**to)) return bad(*why);
  json& realms = realms_of(doc);
  if (!realms.contains(**from)) return make_error("Realm '" + **from + "' not found", 404);
  // A name already renamed away is kept only to lock what is stored under it: it has no realm to move.
  if (realms[**from].is_object() && realms[**from].contains("renamed_to"))
    return make_error("Realm '" + **from + "' not found (renamed to '" + realms[**from]["renamed_to"].dump() + "')", 404);
  if (realms.contains(**to)) return make_error("Realm '" + **to + "' already exists", 409);
  // The old name keeps its settings (keys, required), marked renamed_to, until an admin removes it:
  // what is stored under it (rows, durable subscriptions) stays there, and an unconfigured name would
  // admit anonymous consumers to those queues. remove_realm of the old name deletes them.
  realms[**to] = realms[**from];
  realms[**from]["renamed_to"] = **to;
  for (auto& t : array_at(doc, "tokens")) {
    if (t.is_object() && t.value("realm", "default") == **from) t["realm"] = **to;
  }
  out.realm = **to;
  return Ok{};
}

Status add_management_token(const json& body, json& doc, Outcome&) {
  auto token = text(body, {"token"});
  if (!token) return token.error();
  auto prefix = text(body, {"realm_prefix"});
  if (!prefix) return prefix.error();
  if (!*token || (*token)->empty()) return bad("token must be a non-empty string");
  if (!*prefix) return bad("realm_prefix must be a string");
  auto only = flag(body, {"ephemeral_only"});
  if (!only) return only.error();
  json& tokens = array_at(doc, "management_tokens", "managementTokens");
  for (const auto& t : tokens) {
    if (t.is_object() && t.value("token", "") == **token) return make_error("Management token already exists", 409);
  }
  json entry = {{"token", **token}, {"realm_prefix", **prefix}};
  if (*only) entry["ephemeral_only"] = **only;
  if (body.contains("max_ttl") && !body["max_ttl"].is_null()) {
    auto t = realm_duration(body["max_ttl"], "max_ttl");
    if (!t) return t.error();
    entry["max_ttl"] = body["max_ttl"];
  }
  tokens.push_back(entry);
  return Ok{};
}

Status revoke_management_token(const json& body, json& doc, Outcome&) {
  auto hash = text(body, {"token_hash"});
  if (!hash) return hash.error();
  if (!*hash) return bad("token_hash must be a string");
  json& tokens = array_at(doc, "management_tokens", "managementTokens");
  for (auto it = tokens.begin(); it != tokens.end(); ++it) {
    if (it->is_object() && auth::sha256_hex(it->value("token", "")) == **hash) {
      tokens.erase(it);
      return Ok{};
    }
  }
  return make_error("Management token not found", 404);
}

Status set_external_auth(const json& body, json& doc, Outcome& out) {
  auto url = text(body, {"auth_url"});
  if (!url) return url.error();
  auto secret = text(body, {"auth_secret"});
  if (!secret) return secret.error();
  auto realm = text(body, {"realm"});
  if (!realm) return realm.error();
  auto prefix = text(body, {"realm_prefix"});
  if (!prefix) return prefix.error();
  if (*realm && *prefix) return bad("give either realm or realm_prefix, not both");
  std::string u = url->value_or("");
  if (!u.empty() && !valid_url(u)) return bad("auth_url must be an http:// or https:// URL");
  // The camelCase aliases a settings file may use (auth_config.cc) go with the keys they stand for.
  auto apply = [&](json& target) {
    target.erase("authUrl");
    if (u.empty()) {
      for (const char* k : {"auth_url", "auth_secret", "authSecret"}) target.erase(k);
      return;
    }
    target["auth_url"] = u;
    if (*secret) {
      target.erase("authSecret");
      if ((*secret)->empty()) target.erase("auth_secret");
      else target["auth_secret"] = **secret;
    }
  };
  if (*realm) {
    auto cfg = realm_config(body, doc, true, out);
    if (!cfg) return cfg.error();
    apply(**cfg);
  } else if (*prefix) {
    json& validators = array_at(doc, "external_validators", "externalValidators");
    auto it = std::find_if(validators.begin(), validators.end(),
                           [&](const json& v) {
                             return v.is_object() && v.value("realm_prefix", v.value("realmPrefix", "")) == **prefix;
                           });
    if (u.empty()) {
      if (it != validators.end()) validators.erase(it);
    } else {
      if (it == validators.end()) {
        validators.push_back({{"realm_prefix", **prefix}});
        it = validators.end() - 1;
      }
      apply(*it);
    }
  } else {
    apply(doc["auth"]);
  }
  return Ok{};
}

Status revoke_token(const json& body, json& doc, Outcome& out) {
  auto token = text(body, {"token"});
  if (!token) return token.error();
  auto hash = text(body, {"token_hash"});
  if (!hash) return hash.error();
  auto realm = text(body, {"realm"});
  if (!realm) return realm.error();
  auto client = text(body, {"client_id"});
  if (!client) return client.error();
  auto allow_admin = flag(body, {"allow_admin"});
  if (!allow_admin) return allow_admin.error();
  if (!*token && !*hash && !(*realm && *client)) return bad("give token, token_hash, or realm and client_id");
  json& tokens = array_at(doc, "tokens");
  json revoked = json::array();
  for (auto it = tokens.begin(); it != tokens.end();) {
    const json& t = *it;
    std::string value = t.is_object() ? t.value("token", "") : "";
    bool match = (*token && value == **token) || (*hash && auth::sha256_hex(value) == **hash) ||
                 (*realm && *client && t.value("realm", "default") == **realm && t.value("client_id", "") == **client);
    bool admin = t.value("realm", "default") == "*" && t.value("role", "both") == "admin";
    if (match && (!admin || allow_admin->value_or(false))) {
      revoked.push_back(token_view(t));
      it = tokens.erase(it);
    } else {
      ++it;
    }
  }
  if (revoked.empty()) return make_error("No matching token", 404);
  out.extra["revoked"] = revoked;
  return Ok{};
}

json scoped_reply(const json& doc, const Outcome& out) {
  json realms = json::object();
  if (doc.contains("auth") && doc["auth"].contains("realms") && doc["auth"]["realms"].contains(out.realm))
    realms[out.realm] = public_realm(doc["auth"]["realms"][out.realm]);
  json reply = {{"ok", true}, {"realm", out.realm}, {"settings", {{"realms", realms}}}};
  for (const auto& [k, v] : out.extra.items()) reply[k] = v;
  return reply;
}

Result<PersistenceChange> parse_persistence(const json& body) {
  PersistenceChange c;
  auto backend = text(body, {"storage", "backend"});
  if (!backend) return backend.error();
  if (!*backend) return bad("storage must be memory, file, sqlite or redis");
  c.storage = **backend;
  c.target.backend = c.storage == "sqlite" ? "file" : c.storage;
  if (c.target.backend != "memory" && c.target.backend != "file" && c.target.backend != "redis")
    return bad("unsupported storage backend '" + c.storage + "'");
  for (const char* k : {"storage_options", "options"}) {
    if (body.contains(k) && !body[k].is_null()) {
      if (!body[k].is_object()) return bad(std::string(k) + " must be an object");
      c.options = body[k];
    }
  }
  for (const char* k : {"url", "prefix", "filename", "path"}) {
    auto v = text(body, {k});
    if (!v) return v.error();
    if (*v) c.options[k] = **v;
  }
  for (const char* k : {"url", "prefix", "filename", "path"}) {
    if (c.options.contains(k) && !c.options[k].is_string()) return bad(std::string("storage_options.") + k + " must be a string");
  }
  c.target.path = c.options.value("path", c.options.value("filename", ""));
  c.target.url = c.options.value("url", "redis://127.0.0.1:6379");
  c.target.prefix = c.options.value("prefix", "siomq");
  const json* ttl = body.contains("default_ttl") && !body["default_ttl"].is_null() ? &body["default_ttl"]
                    : c.options.contains("default_ttl") && !c.options["default_ttl"].is_null() ? &c.options["default_ttl"]
                                                                                              : nullptr;
  if (ttl) {
    auto parsed = durations::parse_ttl(ttl->dump());
    if (!(ttl->is_number() || ttl->is_string()) || (ttl->is_string() && parsed.kind != durations::Ttl::Kind::ms))
      return bad("default_ttl must be a number of seconds or a duration such as \"12h\"");
    c.default_ttl = parsed;
    c.options["default_ttl"] = *ttl;
  }
  return c;
}

}  // namespace siomq::surfaces::management
