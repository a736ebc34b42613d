#include "surfaces/tyo_mq/management.h"

#include <spdlog/spdlog.h>

#include <array>
#include <string_view>

#include "net/sio_server.h"
#include "surfaces/tyo_mq/management_call.h"
#include "surfaces/tyo_mq/management_fields.h"
#include "surfaces/tyo_mq/management_persistence.h"
#include "surfaces/tyo_mq/management_queues.h"
#include "surfaces/tyo_mq/management_settings.h"
#include "surfaces/tyo_mq/public_settings.h"
#include "surfaces/tyo_mq/realm_disposal.h"
#include "surfaces/tyo_mq/signed_request.h"
#include "surfaces/tyo_mq/socket_adapter.h"
#include "wire/log_text.h"

namespace siomq::surfaces {
namespace management {
namespace {

using nlohmann::json;

// Synchronous commands: always answered on AUTH_MANAGEMENT_RESULT (or the ack callback).
void result(const Call& c, const json& payload) { answer(c.reply, "AUTH_MANAGEMENT_RESULT", payload); }

void get(const Call& c) { result(c, {{"ok", true}, {"settings", public_settings(c.ctx.settings.document())}}); }

void reload_settings(const Call& c) {
  auto s = c.ctx.settings.reload();
  if (!s) return result(c, failure(s.error()));
  result(c, {{"ok", true}, {"settings", public_settings(c.ctx.settings.document())}});
}

void remove_realm(const Call& c) {
  auto realm = text(c.body, {"realm"});
  if (!realm) return result(c, failure(realm.error()));
  if (!*realm || (*realm)->empty()) return result(c, failure(bad("realm must be a non-empty string")));
  if (**realm == "*" || **realm == "default") return result(c, failure(bad("the realms '*' and 'default' cannot be removed")));
  // Answered once the deletion of its stored rows is written: "removed" is never said before it is so.
  auto disposed = dispose_realm(c.ctx, **realm, true, [ctx = c.ctx.shared_from_this(), reply = c.reply.keep()](const Status& st, const Disposal& d) {
    if (!st)
      return async_result(*reply,
                          failure(make_error("the realm's stored messages could not be deleted: " + st.error().message, 500)));
    async_result(*reply,
                 {{"ok", true},
                  {"settings", public_settings(ctx->settings.document())},
                  {"removed_tokens", d.removed_tokens},
                  {"disconnected_sockets", d.disconnected_sockets}});
  });
  if (!disposed) return result(c, failure(disposed.error()));
}

// backup_auth_store {path}: a consistent copy of the auth store (auth_store.h) in a new directory, which
// a server opens as its auth_store as it is.
void backup_auth_store(const Call& c) {
  auto path = text(c.body, {"path"});
  if (!path) return result(c, failure(path.error()));
  if (!*path || (*path)->empty()) return result(c, failure(bad("path must be a non-empty string")));
  if (auto s = c.ctx.settings.backup_auth_store(**path); !s) return result(c, failure(s.error()));
  result(c, {{"ok", true}, {"path", **path}});
}

// Applies `change` to the settings file; the reply holds the settings after it (only the realm's own,
// for a realm signer).
void change_settings(const Call& c, const Change& change) {
  Outcome out;
  json doc_after;
  auto s = c.ctx.settings.update([&](json& doc) -> Status {
    auto st = change(doc, out);
    if (st) doc_after = doc;
    return st;
  });
  if (!s) return result(c, failure(s.error()));
  if (c.realm_signed) return result(c, scoped_reply(doc_after, out));
  json payload = {{"ok", true}, {"settings", public_settings(doc_after)}};
  for (const auto& [k, v] : out.extra.items()) payload[k] = v;
  result(c, payload);
}

// A command that is one change of the settings document.
template <Status (*change)(const json& body, json& doc, Outcome& out)>
void settings_command(const Call& c) {
  change_settings(c, [&](json& doc, Outcome& o) { return change(c.body, doc, o); });
}

void set_realm_lifetime_command(const Call& c) {
  change_settings(c, [&](json& doc, Outcome& o) { return set_realm_lifetime(c.body, doc, o, c.snap, c.realm_signed); });
}

struct Command {
  std::string_view name;
  // May be signed with the realm's own manager_key instead of an admin token.
  bool realm_scoped;
  Handler handler;
};

constexpr std::array kCommands{
    Command{"stats", false, stats},
    Command{"dlq_list", false, dlq_list},
    Command{"dlq_discard", false, dlq_discard},
    Command{"dlq_replay", false, dlq_replay},
    Command{"set_persistence", false, set_persistence},
    Command{"get", false, get},
    Command{"reload_settings", false, reload_settings},
    Command{"remove_realm", false, remove_realm},
    Command{"set_global_auth", false, settings_command<set_global_auth>},
    Command{"add_realm", false, settings_command<add_realm>},
    Command{"rename_realm", false, settings_command<rename_realm>},
    Command{"set_realm_auth", false, settings_command<set_realm_auth>},
    Command{"set_realm_acceptance", true, settings_command<set_realm_acceptance>},
    Command{"set_realm_manager_key", false, settings_command<set_realm_manager_key>},
    Command{"set_realm_key", true, settings_command<set_realm_key>},
    Command{"set_realm_e2ee", true, settings_command<set_realm_e2ee>},
    Command{"set_realm_lifetime", true, set_realm_lifetime_command},
    Command{"add_management_token", false, settings_command<add_management_token>},
    Command{"revoke_management_token", false, settings_command<revoke_management_token>},
    Command{"set_external_auth", false, settings_command<set_external_auth>},
    Command{"revoke_token", false, settings_command<revoke_token>},
    Command{"backup_auth_store", false, backup_auth_store},
};

const Command* find_command(std::string_view name) {
  for (const Command& c : kCommands) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

// The realm's manager_key when a realm-scoped command names a realm that has one; the signature is then
// checked against it as well as against the admin tokens.
const std::string* realm_key_for(const auth::Snapshot& snap, const json& body) {
  if (!body.contains("realm") || !body["realm"].is_string()) return nullptr;
  std::string realm = body["realm"].get<std::string>();
  if (realm.empty() || realm == "*" || realm == "default") return nullptr;
  const auth::RealmConfig* rc = snap.auth.realm(realm);
  return rc && rc->manager_key ? &*rc->manager_key : nullptr;
}

// Checks the proof first (a failure goes to AUTH_MANAGEMENT_FAIL), then runs the command.
void on_management(Context& ctx, Session& session, const Request& request, Reply& reply) {
  const auth::Snapshot& snap = ctx.settings.current();
  auto req = signed_request(request);
  auto proof_failed = [&](const Error& e) { answer(reply, "AUTH_MANAGEMENT_FAIL", failure(e)); };
  if (!req) return proof_failed(req.error());
  const json& body = req->body;
  std::string command = body.contains("command") && body["command"].is_string() ? body["command"].get<std::string>() : "";
  const Command* found = find_command(command);
  const std::string* realm_key = found && found->realm_scoped ? realm_key_for(snap, body) : nullptr;
  std::string nonce;
  auto signer = verify_signer(ctx, snap, "AUTH_MANAGEMENT_COMMAND", *req, realm_key, &nonce);
  if (!signer) return proof_failed(signer.error());
  const bool realm_signed = *signer == Signer::realm;
  auto run = [ctx = ctx.shared_from_this(), body = std::move(req->body), command, found, realm_signed](Session& s, Reply& r) {
    spdlog::info("management: {} from {} ({})", command.empty() ? "(none)" : log_text(command), s.id(),
                 realm_signed ? "realm manager" : "admin");
    Call call{*ctx, ctx->settings.current(), body, realm_signed, r};
    if (!found) return result(call, failure(bad("unknown management command")));
    found->handler(call);
  };
  once_claimed(ctx, session, reply, nonce, std::move(run),
               [](Reply& r, const Error& e) { answer(r, "AUTH_MANAGEMENT_FAIL", failure(e)); });
}

}  // namespace

void async_result(Reply& to, const json& payload) {
  answer(to, payload.value("ok", false) ? "AUTH_MANAGEMENT_RESULT" : "AUTH_MANAGEMENT_FAIL", payload);
}

}  // namespace management

void register_management_handlers(const std::shared_ptr<Context>& ctx, net::Namespace& ns) {
  ns.handlers["AUTH_MANAGEMENT_COMMAND"] = socket_handler(ctx, management::on_management);
}

}  // namespace siomq::surfaces
