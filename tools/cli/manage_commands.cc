// `siomq dlq ls|replay|discard`, `siomq settings get|reload`, `siomq token revoke` (signed tyo-mq
// manager commands) and `siomq stats` (the bus's stats, and tyo-mq's when there is an admin token).
#include <CLI/CLI.hpp>

#include "tools/cli/bus_format.h"
#include "tools/cli/commands.h"
#include "tools/cli/connect.h"
#include "tools/cli/output.h"
#include "tools/cli/signed.h"

namespace siomq::cli {
namespace {

using nlohmann::json;

int dlq_ls(const Context& ctx, const Output& out) {
  return with_signer("dlq ls", "", ctx, out, [&](tyomq::Client& client, const std::string& secret) {
    tyomq::Manager m(client, secret);
    auto r = m.dlq_list(ctx.realm).get();
    if (!r) return out.fail("dlq ls", r.error());
    json entries = json::array();
    Table table({"ID", "REALM", "EVENT", "PRODUCER", "CONSUMER", "REASON", "DEAD-LETTERED"});
    for (const auto& e : *r) {
      entries.push_back(json{{"id", e.id}, {"realm", e.realm}, {"event", e.event}, {"producer", e.producer},
                             {"consumer", e.consumer}, {"reason", e.reason}, {"created_at", e.created_at},
                             {"expires_at", e.expires_at}, {"dead_lettered_at", e.dead_lettered_at},
                             {"message", json_or_string(e.message)}});
      table.add({e.id, e.realm, e.event, e.producer, e.consumer, e.reason, e.dead_lettered_at});
    }
    if (out.json()) out.print_json(json{{"entries", entries}});
    else if (table.size() == 0) out.line("no dead letters");
    else table.print(out);
    return static_cast<int>(kExitOk);
  });
}

int dlq_replay(const std::string& id, const Context& ctx, const Output& out) {
  return with_signer("dlq replay", "", ctx, out, [&](tyomq::Client& client, const std::string& secret) {
    tyomq::Manager m(client, secret);
    auto r = m.dlq_replay(id, ctx.realm).get();
    if (!r) return out.fail("dlq replay", r.error());
    if (out.json()) out.print_json(json{{"msg_id", id}, {"new_msg_id", *r}});
    else out.line("replayed " + id + " as " + *r);
    return static_cast<int>(kExitOk);
  });
}

int dlq_discard(const std::string& id, const Context& ctx, const Output& out) {
  return with_signer("dlq discard", "", ctx, out, [&](tyomq::Client& client, const std::string& secret) {
    tyomq::Manager m(client, secret);
    if (auto st = m.dlq_discard(id, ctx.realm).get(); !st) return out.fail("dlq discard", st.error());
    if (out.json()) out.print_json(json{{"discarded", id}});
    else out.line("discarded " + id);
    return static_cast<int>(kExitOk);
  });
}

struct RevokeFlags {
  std::string token, hash, client_id;
  bool allow_admin = false;
};

int revoke(const RevokeFlags& f, const Context& ctx, const Output& out) {
  int given = !f.token.empty() + !f.hash.empty() + !f.client_id.empty();
  if (given != 1) return out.usage("token revoke needs one of: a token, --hash HASH, --client-id ID (with --realm)");
  if (!f.client_id.empty() && ctx.realm.empty()) return out.usage("token revoke --client-id needs --realm");
  tyomq::RevokeToken which;
  which.token = f.token;
  which.token_hash = f.hash;
  which.client_id = f.client_id;
  which.realm = ctx.realm;
  which.allow_admin = f.allow_admin;
  return run_signed("token revoke", "", ctx, out, [which](tyomq::Manager& m) { return m.revoke_token(which); }, says("revoked"));
}

// tyo-mq's stats answer: {realms:{id:{producers:{total,online},consumers:{total,online},subscriptions}}, …}.
void print_tyomq_stats(const Output& out, const json& answer) {
  const json* realms = nullptr;
  for (const json* at : {&answer, answer.contains("stats") ? &answer["stats"] : nullptr})
    if (at && at->is_object() && at->contains("realms") && (*at)["realms"].is_object()) realms = &(*at)["realms"];
  auto count = [](const json& r, const char* kind, const char* which) -> std::string {
    if (!r.contains(kind) || !r[kind].is_object() || !r[kind].contains(which)) return "-";
    return dump(r[kind][which]);
  };
  Table table({"REALM", "PRODUCERS", "ONLINE", "CONSUMERS", "ONLINE", "SUBSCRIPTIONS"});
  if (realms)
    for (const auto& [name, r] : realms->items())
      table.add({name, count(r, "producers", "total"), count(r, "producers", "online"), count(r, "consumers", "total"),
                 count(r, "consumers", "online"), r.contains("subscriptions") ? dump(r["subscriptions"]) : "-"});
  out.line("");
  out.line("tyo-mq:");
  table.print(out);
}

int stats(const Context& ctx, const Output& out) {
  auto conn = connect_bus(ctx, true);
  if (!conn) return out.fail("stats", conn.error());
  auto s = (*conn)->stats().get();
  if (!s) return out.fail("stats", s.error());
  json doc{{"bus", to_json(*s)}};
  std::optional<json> tyo;
  if (!ctx.admin_token.empty()) {
    auto client = connect_tyomq(ctx, false);
    if (!client) return out.fail("stats", client.error());
    tyomq::Manager m(**client, ctx.admin_token);
    auto r = m.stats().get();
    if (!r) return out.fail("stats (tyo-mq)", r.error());
    tyo = json_or_string(*r);
    doc["tyomq"] = *tyo;
  }
  if (out.json()) {
    out.print_json(doc);
    return kExitOk;
  }
  Fields f;
  f.add("Server", s->server_id).add("Version", s->version).add("Uptime", std::to_string(s->uptime_ms / 1000) + " s");
  f.add("Connections", std::to_string(s->connections) + " (" + std::to_string(s->total_connections) + " in all)");
  f.add("Subscriptions", std::to_string(s->subscriptions));
  f.add("Messages in / out", std::to_string(s->in_msgs) + " / " + std::to_string(s->out_msgs));
  f.add("Bytes in / out", human_bytes(static_cast<int64_t>(s->in_bytes)) + " / " + human_bytes(static_cast<int64_t>(s->out_bytes)));
  f.add("Slow consumers", std::to_string(s->slow_consumers));
  f.add("Streams", std::to_string(s->streams) + ", " + std::to_string(s->consumers) + " consumers");
  f.add("Stored", std::to_string(s->stream_msgs) + " messages, " + human_bytes(static_cast<int64_t>(s->stream_bytes)));
  f.add("Memory (RSS)", human_bytes(static_cast<int64_t>(s->rss_bytes)));
  f.print(out);
  if (tyo) print_tyomq_stats(out, *tyo);
  return kExitOk;
}

}  // namespace

void add_manage_commands(Commands& commands) {
  CLI::App& app = commands.app();
  CLI::App* dlq = commands.group(app, "dlq", "tyo-mq dead letters (signed with the admin token)",
                                 "  siomq dlq ls --realm r1\n  siomq dlq replay <id>\n");
  commands.add(*dlq, "ls", "List the dead letters (of --realm, or all)", "  siomq dlq ls\n  siomq dlq ls --realm r1 --json\n",
               [](const Context& ctx, const Output& out) { return dlq_ls(ctx, out); });
  auto replay_id = std::make_shared<std::string>();
  commands
      .add(*dlq, "replay", "Put a dead letter back in its queue", "  siomq dlq replay 6c1f...\n",
           [replay_id](const Context& ctx, const Output& out) { return dlq_replay(*replay_id, ctx, out); })
      ->add_option("id", *replay_id, "Dead letter id")
      ->required();
  auto discard_id = std::make_shared<std::string>();
  commands
      .add(*dlq, "discard", "Delete a dead letter", "  siomq dlq discard 6c1f...\n",
           [discard_id](const Context& ctx, const Output& out) { return dlq_discard(*discard_id, ctx, out); })
      ->add_option("id", *discard_id, "Dead letter id")
      ->required();

  CLI::App* settings = commands.group(app, "settings", "The server's live settings (signed with the admin token)",
                                      "  siomq settings get --json | jq .realms\n  siomq settings reload\n");
  commands.add(*settings, "get", "Print the public settings (secrets masked by the server)", "  siomq settings get\n",
               [](const Context& ctx, const Output& out) {
                 return run_signed("settings get", "", ctx, out, [](tyomq::Manager& m) { return m.get_settings(); },
                                   [](const Output& o, const std::string& answer) {
                                     json doc = json_or_string(answer);
                                     o.line(dump(doc.is_object() && doc.contains("settings") ? doc["settings"] : doc, 2));
                                   });
               });
  commands.add(*settings, "reload", "Read the settings file again", "  siomq settings reload\n",
               [](const Context& ctx, const Output& out) {
                 return run_signed("settings reload", "", ctx, out, [](tyomq::Manager& m) { return m.reload_settings(); },
                                   says("reloaded the settings"));
               });

  CLI::App* token = commands.group(app, "token", "Tokens (signed with the admin token)", "  siomq token revoke --hash 9f86...\n");
  auto r = std::make_shared<RevokeFlags>();
  CLI::App* revoke_cmd = commands.add(*token, "revoke", "Revoke a token: new authentications with it fail",
                                      "  siomq token revoke tok-r1\n"
                                      "  siomq token revoke --hash 9f86d0...\n"
                                      "  siomq token revoke --client-id c1 --realm r1\n",
                                      [r](const Context& ctx, const Output& out) { return revoke(*r, ctx, out); });
  revoke_cmd->add_option("value", r->token, "The token itself");
  revoke_cmd->add_option("--hash", r->hash, "The token's SHA-256 (hex), as `settings get` shows it");
  revoke_cmd->add_option("--client-id", r->client_id, "The token of this client id in --realm");
  revoke_cmd->add_flag("--allow-admin", r->allow_admin, "Allow revoking an admin token");

  commands.add(app, "stats", "Server statistics: the bus's, and tyo-mq's per realm when an admin token is set",
               "  siomq stats\n  siomq stats --admin-token $TYO_MQ_ADMIN_TOKEN --json\n",
               [](const Context& ctx, const Output& out) { return stats(ctx, out); });
}

}  // namespace siomq::cli
