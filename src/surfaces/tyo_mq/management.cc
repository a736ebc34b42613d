// AUTH_MANAGEMENT_COMMAND (§8.2): admin-signed (or, for four realm commands, realm-manager-signed)
// changes to the settings, realm disposal, stats and the DLQ; and the housekeeping that expires
// ephemeral realms and evicts idle names (§11.2).
#include <spdlog/spdlog.h>


#include "auth/auth_config.h"
#include "auth/hmac.h"
#include "broker/durable_queues.h"
#include "net/sio_server.h"
#include "surfaces/tyo_mq/public_settings.h"
#include "surfaces/tyo_mq/context.h"
#include "wire/clock.h"
#include "wire/durations.h"
#include "wire/js_json.h"
#include "wire/log_text.h"

namespace siomq::surfaces {
namespace {

using nlohmann::json;

constexpr int64_t kDefaultRealmTtlMs = 86'400'000;
// Expired realms are looked for every second (the reference sweeps every 60 s): a realm ends within a
// second of its expires_at.
constexpr int64_t kEphemeralSweepMs = 1000;

Error bad(std::string message) { return make_error(std::move(message), 400); }

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

// A realm duration (ttl, max_ttl): seconds as a number, or "<n>[.<n>](ms|s|m|h|d)"; 0 is invalid.
Result<int64_t> realm_duration(const json& v, const char* what) {
  if (v.is_string() && !plain_duration(v.get<std::string>()))
    return bad(std::string(what) + " must be a positive duration such as 3600 or \"12h\"");
  auto ms = v.is_number() || v.is_string() ? durations::parse_duration_ms(v.dump()) : std::nullopt;
  if (!ms) return bad(std::string(what) + " must be a positive duration such as 3600 or \"12h\"");
  return *ms;
}

// The string at `key` (or its aliases), nullopt when absent or null; an error when it is another type.
Result<std::optional<std::string>> text(const json& body, std::initializer_list<const char*> keys) {
  for (const char* k : keys) {
    auto it = body.find(k);
    if (it == body.end() || it->is_null()) continue;
    if (!it->is_string()) return bad(std::string(k) + " must be a string");
    return std::optional<std::string>(it->get<std::string>());
  }
  return std::optional<std::string>();
}

Result<std::optional<bool>> flag(const json& body, std::initializer_list<const char*> keys) {
  for (const char* k : keys) {
    auto it = body.find(k);
    if (it == body.end() || it->is_null()) continue;
    if (!it->is_boolean()) return bad(std::string(k) + " must be a boolean");
    return std::optional<bool>(it->get<bool>());
  }
  return std::optional<bool>();
}

json& realms_of(json& doc) {
  json& auth = doc["auth"];
  if (!auth.is_object()) auth = json::object();
  json& realms = auth["realms"];
  if (!realms.is_object()) realms = json::object();
  return realms;
}

json& array_at(json& doc, const char* key) {
  json& auth = doc["auth"];
  if (!auth.is_object()) auth = json::object();
  json& a = auth[key];
  if (!a.is_array()) a = json::array();
  return a;
}

// What a command did: the reply's extra fields, and for a realm-scoped signer the realm it concerns.
struct Outcome {
  json extra = json::object();
  std::string realm;
};

using Change = std::function<Status(json& doc, Outcome& out)>;

// add_realm: a new realm's settings (409 if it exists).
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

Status set_flag_of_realm(const json& body, json& doc, Outcome& out, const char* field) {
  auto cfg = realm_config(body, doc, true, out);
  if (!cfg) return cfg.error();
  auto required = flag(body, {"required"});
  if (!required) return required.error();
  if (!*required) return bad("required must be a boolean");
  (**cfg)[field] = **required;
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
  json& tokens = array_at(doc, "management_tokens");
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
  json& tokens = array_at(doc, "management_tokens");
  for (auto it = tokens.begin(); it != tokens.end(); ++it) {
    if (it->is_object() && auth::sha256_hex(it->value("token", "")) == **hash) {
      tokens.erase(it);
      return Ok{};
    }
  }
  return make_error("Management token not found", 404);
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
  auto apply = [&](json& target) {
    if (u.empty()) {
      target.erase("auth_url");
      target.erase("auth_secret");
      return;
    }
    target["auth_url"] = u;
    if (*secret) {
      if ((*secret)->empty()) target.erase("auth_secret");
      else target["auth_secret"] = **secret;
    }
  };
  if (*realm) {
    auto cfg = realm_config(body, doc, true, out);
    if (!cfg) return cfg.error();
    apply(**cfg);
  } else if (*prefix) {
    json& validators = array_at(doc, "external_validators");
    auto it = std::find_if(validators.begin(), validators.end(),
                           [&](const json& v) { return v.is_object() && v.value("realm_prefix", "") == **prefix; });
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

// set_persistence's request: the store to move to and what the settings file will say of it.
struct PersistenceChange {
  StoreTarget target;
  std::string storage;  // as given ("sqlite" is kept in the file, served by the file store)
  json options = json::object();
  std::optional<durations::Ttl> default_ttl;
};

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

// A realm-scoped reply: only that realm's settings (§8.2).
json scoped_reply(const json& doc, const Outcome& out) {
  json realms = json::object();
  if (doc.contains("auth") && doc["auth"].contains("realms") && doc["auth"]["realms"].contains(out.realm))
    realms[out.realm] = public_realm(doc["auth"]["realms"][out.realm]);
  json reply = {{"ok", true}, {"realm", out.realm}, {"settings", {{"realms", realms}}}};
  for (const auto& [k, v] : out.extra.items()) reply[k] = v;
  return reply;
}

json dead_entry(const store::DeadRow& d) {
  json message = json::parse(d.row.payload.str(), nullptr, false);
  return {{"id", d.row.id},
          {"realm", d.row.realm},
          {"event", d.row.event},
          {"consumer", d.row.consumer},
          {"message", message.is_discarded() ? json(d.row.payload.str()) : message},
          {"producer", d.row.producer},
          {"created_at", js::iso_date(d.row.created_ms)},
          {"expires_at", d.row.expires_ms ? json(d.row.expires_ms) : json()},
          {"reason", d.reason},
          {"dead_lettered_at", js::iso_date(d.dead_lettered_ms)}};
}

// An asynchronous command's answer (stats aside): the ack callback, else AUTH_MANAGEMENT_RESULT when ok and
// AUTH_MANAGEMENT_FAIL when not.
void async_result(const std::shared_ptr<SocketEndpoint>& to, std::optional<uint64_t> ack_id, const json& payload) {
  answer_later(to, ack_id, payload.value("ok", false) ? "AUTH_MANAGEMENT_RESULT" : "AUTH_MANAGEMENT_FAIL", payload);
}

json stats_of(Context& ctx) {
  json realms = json::object();
  for (const auto& name : ctx.broker.realm_names()) {
    auto c = ctx.broker.with_realm(name, [](broker::Realm& r) { return r.counts(); });
    realms[name] = {{"producers", {{"total", c.producers}, {"online", c.producers_online}}},
                    {"consumers", {{"total", c.consumers}, {"online", c.consumers_online}}},
                    {"subscriptions", c.keys}};
  }
  return {{"realms", realms}, {"connections_current", ctx.sockets.size()}};
}

// set_persistence: the live store moves (everything stored is copied, the writer switches), then the
// settings file says so. Answered when the move is done, always on AUTH_MANAGEMENT_RESULT without an ack.
void set_persistence(const std::shared_ptr<Context>& ctx, net::Socket& socket, const net::Message& msg,
                     const std::shared_ptr<SocketEndpoint>& endpoint, const json& body) {
  auto reply = [&](const json& payload) { answer(socket, msg, "AUTH_MANAGEMENT_RESULT", payload); };
  auto change = parse_persistence(body);
  if (!change) return reply(failure(change.error()));
  if (!ctx->options.move_store) return reply(failure(make_error("this server cannot change its store while running", 501)));
  if (ctx->moving_store.exchange(true)) return reply(failure(make_error("a store move is already in progress", 409)));
  ctx->options.move_store(change->target, [ctx, endpoint, ack_id = msg.ack_id, change = *change](const Status& s) {
    ctx->moving_store = false;
    auto send = [&](const json& payload) { answer_later(endpoint, ack_id, "AUTH_MANAGEMENT_RESULT", payload); };
    if (!s) return send(failure(s.error()));
    if (change.default_ttl) {
      std::optional<int64_t> ttl;
      if (change.default_ttl->kind == durations::Ttl::Kind::ms) ttl = change.default_ttl->ms;
      ctx->set_default_ttl(ttl);
      ctx->queues.set_default_ttl(ttl);
    }
    json after;
    auto saved = ctx->settings.update([&](json& doc) -> Status {
      doc["storage"] = change.storage;
      doc["storage_options"] = change.options;
      after = doc;
      return Ok{};
    });
    if (!saved) return send(failure(saved.error()));
    send({{"ok", true}, {"settings", public_settings(after)}});
  });
}

void on_management(const std::shared_ptr<Context>& ctx, net::Socket& socket, const net::Message& msg) {
  const auth::Snapshot& snap = ctx->settings.current();
  auto req = signed_request(msg);
  auto proof_failed = [&](const Error& e) { answer(socket, msg, "AUTH_MANAGEMENT_FAIL", failure(e)); };
  if (!req) return proof_failed(req.error());
  const json& body = req->body;
  std::string command = body.contains("command") && body["command"].is_string() ? body["command"].get<std::string>() : "";
  // Four realm commands may be signed with the realm's own manager_key instead of an admin token.
  static const std::set<std::string> kRealmScoped = {"set_realm_lifetime", "set_realm_key", "set_realm_acceptance",
                                                     "set_realm_e2ee"};
  const std::string* realm_key = nullptr;
  if (kRealmScoped.count(command) && body.contains("realm") && body["realm"].is_string()) {
    std::string realm = body["realm"].get<std::string>();
    if (!realm.empty() && realm != "*" && realm != "default") {
      if (const auth::RealmConfig* rc = snap.auth.realm(realm); rc && rc->manager_key) realm_key = &*rc->manager_key;
    }
  }
  auto signer = verify_signer(*ctx, snap, "AUTH_MANAGEMENT_COMMAND", *req, realm_key);
  if (!signer) return proof_failed(signer.error());
  const bool realm_signed = *signer == Signer::realm;
  auto endpoint = endpoint_of(socket);
  spdlog::info("management: {} from {} ({})", command.empty() ? "(none)" : log_text(command), socket.id(),
               realm_signed ? "realm manager" : "admin");

  // Asynchronous commands: answered from the durable queues' thread.
  if (command == "stats") return answer(socket, msg, "AUTH_MANAGEMENT_RESULT", {{"ok", true}, {"stats", stats_of(*ctx)}});
  auto optional_realm = [&]() -> Result<std::optional<std::string>> { return text(body, {"realm"}); };
  if (command == "dlq_list") {
    auto realm = optional_realm();
    if (!realm) return answer(socket, msg, "AUTH_MANAGEMENT_FAIL", failure(realm.error()));
    ctx->queues.dlq_list(*realm, [endpoint, ack_id = msg.ack_id, realm = *realm](std::vector<store::DeadRow> rows) {
      json entries = json::array();
      for (const auto& d : rows) entries.push_back(dead_entry(d));
      async_result(endpoint, ack_id, {{"ok", true}, {"realm", realm ? json(*realm) : json()}, {"entries", entries}});
    });
    return;
  }
  if (command == "dlq_discard" || command == "dlq_replay") {
    auto realm = optional_realm();
    auto id = text(body, {"msg_id", "msgId", "id"});
    if (!realm || !id || !*id) {
      Error e = !realm ? realm.error() : !id ? id.error() : bad("msg_id must be a string");
      return answer(socket, msg, "AUTH_MANAGEMENT_FAIL", failure(e));
    }
    std::string msg_id = **id;
    if (command == "dlq_discard") {
      ctx->queues.dlq_discard(msg_id, *realm, [endpoint, ack_id = msg.ack_id, msg_id](const Status& s) {
        async_result(endpoint, ack_id, s ? json{{"ok", true}, {"msg_id", msg_id}} : failure(s.error()));
      });
    } else {
      ctx->queues.dlq_replay(msg_id, *realm, [endpoint, ack_id = msg.ack_id, msg_id](const Result<std::string>& r) {
        async_result(endpoint, ack_id, r ? json{{"ok", true}, {"msg_id", msg_id}, {"new_msg_id", *r}} : failure(r.error()));
      });
    }
    return;
  }

  if (command == "set_persistence") return set_persistence(ctx, socket, msg, endpoint, body);

  // Synchronous commands: always answered on AUTH_MANAGEMENT_RESULT (or the ack callback).
  auto reply = [&](const json& payload) { answer(socket, msg, "AUTH_MANAGEMENT_RESULT", payload); };
  if (command == "get") return reply({{"ok", true}, {"settings", public_settings(ctx->settings.document())}});
  if (command == "reload_settings") {
    auto s = ctx->settings.reload();
    if (!s) return reply(failure(s.error()));
    return reply({{"ok", true}, {"settings", public_settings(ctx->settings.document())}});
  }
  if (command == "remove_realm") {
    auto realm = text(body, {"realm"});
    if (!realm) return reply(failure(realm.error()));
    if (!*realm || (*realm)->empty()) return reply(failure(bad("realm must be a non-empty string")));
    if (**realm == "*" || **realm == "default") return reply(failure(bad("the realms '*' and 'default' cannot be removed")));
    // Answered once the deletion of its stored rows is written: "removed" is never said before it is so.
    auto disposed = dispose_realm(*ctx, **realm, [ctx, endpoint, ack_id = msg.ack_id](const Status& st, const Disposal& d) {
      if (!st)
        return async_result(endpoint, ack_id,
                            failure(make_error("the realm's stored messages could not be deleted: " + st.error().message, 500)));
      async_result(endpoint, ack_id,
                   {{"ok", true},
                    {"settings", public_settings(ctx->settings.document())},
                    {"removed_tokens", d.removed_tokens},
                    {"disconnected_sockets", d.disconnected_sockets}});
    });
    if (!disposed) return reply(failure(disposed.error()));
    return;
  }

  Outcome out;
  Change change;
  if (command == "set_global_auth") {
    change = [&](json& doc, Outcome&) -> Status {
      auto enabled = flag(body, {"enabled"});
      if (!enabled) return enabled.error();
      if (!*enabled) return bad("enabled must be a boolean");
      doc["auth"]["enabled"] = **enabled;
      return Ok{};
    };
  } else if (command == "add_realm") {
    change = [&](json& doc, Outcome& o) { return add_realm(body, doc, o); };
  } else if (command == "rename_realm") {
    change = [&](json& doc, Outcome& o) { return rename_realm(body, doc, o); };
  } else if (command == "set_realm_auth") {
    change = [&](json& doc, Outcome& o) { return set_flag_of_realm(body, doc, o, "required"); };
  } else if (command == "set_realm_acceptance") {
    change = [&](json& doc, Outcome& o) { return set_flag_of_realm(body, doc, o, "require_acceptance"); };
  } else if (command == "set_realm_manager_key") {
    change = [&](json& doc, Outcome& o) { return set_realm_manager_key(body, doc, o); };
  } else if (command == "set_realm_key") {
    change = [&](json& doc, Outcome& o) { return set_realm_key(body, doc, o); };
  } else if (command == "set_realm_e2ee") {
    change = [&](json& doc, Outcome& o) { return set_realm_e2ee(body, doc, o); };
  } else if (command == "set_realm_lifetime") {
    change = [&](json& doc, Outcome& o) { return set_realm_lifetime(body, doc, o, snap, realm_signed); };
  } else if (command == "add_management_token") {
    change = [&](json& doc, Outcome& o) { return add_management_token(body, doc, o); };
  } else if (command == "revoke_management_token") {
    change = [&](json& doc, Outcome& o) { return revoke_management_token(body, doc, o); };
  } else if (command == "set_external_auth") {
    change = [&](json& doc, Outcome& o) { return set_external_auth(body, doc, o); };
  } else if (command == "revoke_token") {
    change = [&](json& doc, Outcome& o) { return revoke_token(body, doc, o); };
  } else {
    return reply(failure(bad("unknown management command")));
  }
  json doc_after;
  auto s = ctx->settings.update([&](json& doc) -> Status {
    auto st = change(doc, out);
    if (st) doc_after = doc;
    return st;
  });
  if (!s) return reply(failure(s.error()));
  if (realm_signed) return reply(scoped_reply(doc_after, out));
  json payload = {{"ok", true}, {"settings", public_settings(doc_after)}};
  for (const auto& [k, v] : out.extra.items()) payload[k] = v;
  reply(payload);
}

}  // namespace

Result<Disposal> dispose_realm(Context& ctx, const std::string& realm,
                               std::function<void(const Status&, const Disposal&)> stored) {
  Disposal d;
  bool known = false;
  auto s = ctx.settings.update([&](json& doc) -> Status {
    if (doc.contains("auth") && doc["auth"].is_object()) {
      json& auth = doc["auth"];
      if (auth.contains("realms") && auth["realms"].is_object()) known = auth["realms"].erase(realm) > 0 || known;
      if (auth.contains("tokens") && auth["tokens"].is_array()) {
        json& tokens = auth["tokens"];
        for (auto it = tokens.begin(); it != tokens.end();) {
          if (it->is_object() && it->value("realm", "default") == realm) {
            it = tokens.erase(it);
            ++d.removed_tokens;
          } else {
            ++it;
          }
        }
      }
    }
    return Ok{};
  });
  if (!s) return s.error();
  auto names = ctx.broker.realm_names();
  known = known || d.removed_tokens > 0 || std::find(names.begin(), names.end(), realm) != names.end();
  if (!known) return make_error("Realm '" + realm + "' not found", 404);
  // Its sockets: those authenticated into it, and any bound to a name in its live state.
  std::set<broker::Endpoint*> closed;
  for (auto& e : ctx.sockets.in_realm(realm)) {
    if (closed.insert(e.get()).second) e->close();
  }
  for (auto& e : ctx.broker.remove_realm(realm)) {
    if (closed.insert(e.get()).second) std::static_pointer_cast<SocketEndpoint>(e)->close();
  }
  d.disconnected_sockets = closed.size();
  ctx.enrolment.remove_realm(realm);
  ctx.queues.purge_realm(realm, [realm, d, stored = std::move(stored)](const Status& st) {
    if (!st) spdlog::error("removing realm '{}': its stored messages could not be deleted: {}", log_text(realm), st.error().message);
    if (stored) stored(st, d);
  });
  spdlog::info("realm '{}' removed: {} tokens, {} sockets disconnected", log_text(realm), d.removed_tokens, d.disconnected_sockets);
  return d;
}

void housekeeping(Context& ctx) {
  const int64_t now = steady_ms();
  auto snap = ctx.settings.snapshot();
  if (!ctx.last_ephemeral_sweep_ms || now - ctx.last_ephemeral_sweep_ms >= kEphemeralSweepMs) {
    ctx.last_ephemeral_sweep_ms = now;
    const int64_t wall = unix_ms();
    for (const auto& [name, cfg] : snap->auth.realms) {
      if (name == "*" || name == "default" || !cfg.expires_at_ms || *cfg.expires_at_ms > wall) continue;
      spdlog::info("realm '{}' expired", name);
      if (auto d = dispose_realm(ctx, name); !d) spdlog::error("expiring realm '{}': {}", name, d.error().message);
    }
  }
  const auth::IdleEviction& idle = snap->idle;
  if (now - ctx.last_idle_sweep_ms >= idle.interval_ms) {
    ctx.last_idle_sweep_ms = now;
    size_t forgotten = 0;
    for (const auto& name : idle.enabled ? ctx.broker.realm_names() : std::vector<std::string>{})
      forgotten += ctx.broker.with_realm(name, [&](broker::Realm& r) { return r.evict_idle(now, idle.ttl_ms); });
    if (forgotten) spdlog::info("idle eviction: {} names offline for over {} ms forgotten", forgotten, idle.ttl_ms);
    // Realms left with nothing in them go too, eviction on or off: made-up realm names cannot pile up.
    if (size_t gone = ctx.broker.reclaim_empty_realms()) spdlog::info("{} empty realms forgotten", gone);
  }
}

void register_management_handlers(const std::shared_ptr<Context>& ctx, net::Namespace& ns) {
  ns.handlers["AUTH_MANAGEMENT_COMMAND"] = [ctx](net::Socket& s, const net::Message& m) { on_management(ctx, s, m); };
}

}  // namespace siomq::surfaces
