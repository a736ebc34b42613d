// siomq::tyomq::Manager (siomq/tyomq_manage.h): each §8.2 command's body written from its arguments
// and sent signed through Client::signed_request.
#include "siomq/tyomq_manage.h"

#include "future_call.h"
#include "json_text.h"

namespace siomq::tyomq {
namespace {

// A realm ttl: digits are seconds (a number on the wire), anything else a duration string.
void put_ttl(json::Object& o, std::string_view key, std::string_view ttl) {
  if (ttl.empty()) return;
  bool digits = ttl.find_first_not_of("0123456789") == std::string_view::npos;
  if (digits) o.raw(key, ttl);
  else o.str(key, ttl);
}

}  // namespace

std::future<Result<std::string>> Manager::command(std::string_view body_json) {
  return detail::as_future<std::string>([&](Callback<std::string> cb) {
    client_.signed_request("AUTH_MANAGEMENT_COMMAND", "AUTH_MANAGEMENT_COMMAND", secret_, body_json, std::move(cb));
  });
}

std::future<Result<std::string>> Manager::get_settings() { return command(R"({"command":"get"})"); }
std::future<Result<std::string>> Manager::reload_settings() { return command(R"({"command":"reload_settings"})"); }

std::future<Result<std::string>> Manager::set_global_auth(bool enabled) {
  return command(json::Object().str("command", "set_global_auth").boolean("enabled", enabled).done());
}

std::future<Result<std::string>> Manager::set_persistence(const PersistenceConfig& c) {
  json::Object o;
  o.str("command", "set_persistence").str("storage", c.storage);
  if (!c.options_json.empty()) o.raw("storage_options", c.options_json);
  if (c.default_ttl) o.num("default_ttl", *c.default_ttl);
  return command(o.done());
}

std::future<Result<std::string>> Manager::add_realm(const RealmConfig& c) {
  json::Object o;
  o.str("command", "add_realm").str("realm", c.realm).boolean("required", c.required);
  o.str_if("manager_key", c.manager_key).str_if("key", c.key);
  if (c.require_acceptance) o.boolean("require_acceptance", *c.require_acceptance);
  o.str_if("e2ee", c.e2ee);
  if (c.ephemeral) o.boolean("ephemeral", true);
  put_ttl(o, "ttl", c.ttl);
  return command(o.done());
}

std::future<Result<std::string>> Manager::rename_realm(std::string_view from, std::string_view to) {
  return command(json::Object().str("command", "rename_realm").str("from", from).str("to", to).done());
}

std::future<Result<std::string>> Manager::remove_realm(std::string_view realm) {
  return command(json::Object().str("command", "remove_realm").str("realm", realm).done());
}

std::future<Result<std::string>> Manager::set_realm_auth(std::string_view realm, bool required) {
  return command(json::Object().str("command", "set_realm_auth").str("realm", realm).boolean("required", required).done());
}

std::future<Result<std::string>> Manager::set_realm_manager_key(std::string_view realm, std::optional<std::string> key) {
  json::Object o;
  o.str("command", "set_realm_manager_key").str("realm", realm);
  if (key) o.str("manager_key", *key);
  return command(o.done());
}

std::future<Result<std::string>> Manager::set_realm_key(std::string_view realm, std::optional<std::string> key,
                                                        std::optional<bool> require_key) {
  json::Object o;
  o.str("command", "set_realm_key").str("realm", realm);
  if (key) o.str("key", *key);
  if (require_key) o.boolean("require_key", *require_key);
  return command(o.done());
}

std::future<Result<std::string>> Manager::set_realm_acceptance(std::string_view realm, bool required) {
  return command(json::Object().str("command", "set_realm_acceptance").str("realm", realm).boolean("required", required).done());
}

std::future<Result<std::string>> Manager::set_realm_e2ee(std::string_view realm, std::string_view policy) {
  return command(json::Object().str("command", "set_realm_e2ee").str("realm", realm).str("e2ee", policy).done());
}

std::future<Result<std::string>> Manager::set_realm_lifetime(std::string_view realm, bool ephemeral, std::string_view ttl) {
  json::Object o;
  o.str("command", "set_realm_lifetime").str("realm", realm).boolean("ephemeral", ephemeral);
  put_ttl(o, "ttl", ttl);
  return command(o.done());
}

std::future<Result<std::string>> Manager::add_management_token(std::string_view token, std::string_view realm_prefix,
                                                               bool ephemeral_only, std::string_view max_ttl) {
  json::Object o;
  o.str("command", "add_management_token").str("token", token).str("realm_prefix", realm_prefix);
  if (ephemeral_only) o.boolean("ephemeral_only", true);
  put_ttl(o, "max_ttl", max_ttl);
  return command(o.done());
}

std::future<Result<std::string>> Manager::revoke_management_token(std::string_view token_hash) {
  return command(json::Object().str("command", "revoke_management_token").str("token_hash", token_hash).done());
}

std::future<Result<std::string>> Manager::set_external_auth(const ExternalAuth& c) {
  json::Object o;
  o.str("command", "set_external_auth").str("auth_url", c.auth_url);
  if (c.auth_secret) o.str("auth_secret", *c.auth_secret);
  o.str_if("realm", c.realm).str_if("realm_prefix", c.realm_prefix);
  return command(o.done());
}

std::future<Result<std::string>> Manager::revoke_token(const RevokeToken& w) {
  json::Object o;
  o.str("command", "revoke_token").str_if("token", w.token).str_if("token_hash", w.token_hash);
  o.str_if("realm", w.realm).str_if("client_id", w.client_id);
  if (w.allow_admin) o.boolean("allow_admin", true);
  return command(o.done());
}

std::future<Result<std::string>> Manager::stats() { return command(R"({"command":"stats"})"); }

std::future<Result<std::vector<DlqEntry>>> Manager::dlq_list(std::string_view realm) {
  return detail::as_future<std::vector<DlqEntry>>([&](Callback<std::vector<DlqEntry>> cb) {
    client_.signed_request("AUTH_MANAGEMENT_COMMAND", "AUTH_MANAGEMENT_COMMAND", secret_,
                           json::Object().str("command", "dlq_list").str_if("realm", realm).done(),
                           [cb = std::move(cb)](Result<std::string> r) {
                             if (!r) return cb(r.error());
                             auto doc = json::thread_parser().parse(r->data(), r->size());
                             if (doc.error()) return cb(Error{errc::protocol, "unreadable answer"});
                             std::vector<DlqEntry> out;
                             simdjson::dom::array entries;
                             if (json::get_array(doc.value_unsafe(), "entries", entries)) {
                               for (auto e : entries) {
                                 DlqEntry d;
                                 d.id = json::get_str(e, "id");
                                 d.realm = json::get_str(e, "realm");
                                 d.event = json::get_str(e, "event");
                                 d.consumer = json::get_str(e, "consumer");
                                 d.producer = json::get_str(e, "producer");
                                 d.reason = json::get_str(e, "reason");
                                 d.created_at = json::get_str(e, "created_at");
                                 d.expires_at = json::get_str(e, "expires_at");
                                 d.dead_lettered_at = json::get_str(e, "dead_lettered_at");
                                 d.message = json::get_raw(e, "message");
                                 out.push_back(std::move(d));
                               }
                             }
                             cb(std::move(out));
                           });
  });
}

std::future<Status> Manager::dlq_discard(std::string_view msg_id, std::string_view realm) {
  return detail::as_future<Ok>([&](Callback<Ok> cb) {
    client_.signed_request("AUTH_MANAGEMENT_COMMAND", "AUTH_MANAGEMENT_COMMAND", secret_,
                           json::Object().str("command", "dlq_discard").str("msg_id", msg_id).str_if("realm", realm).done(),
                           [cb = std::move(cb)](Result<std::string> r) {
                             if (!r) return cb(r.error());
                             cb(Ok{});
                           });
  });
}

std::future<Result<std::string>> Manager::dlq_replay(std::string_view msg_id, std::string_view realm) {
  return detail::as_future<std::string>([&](Callback<std::string> cb) {
    client_.signed_request("AUTH_MANAGEMENT_COMMAND", "AUTH_MANAGEMENT_COMMAND", secret_,
                           json::Object().str("command", "dlq_replay").str("msg_id", msg_id).str_if("realm", realm).done(),
                           [cb = std::move(cb)](Result<std::string> r) {
                             if (!r) return cb(r.error());
                             auto doc = json::thread_parser().parse(r->data(), r->size());
                             if (doc.error()) return cb(Error{errc::protocol, "unreadable answer"});
                             cb(json::get_str(doc.value_unsafe(), "new_msg_id"));
                           });
  });
}

}  // namespace siomq::tyomq
