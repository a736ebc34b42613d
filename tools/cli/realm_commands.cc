// `siomq realm add|rm|ls|rename|key|manager-key|auth|acceptance|e2ee|lifetime`: tyo-mq realm management,
// each a signed command (§8.2) through siomq::tyomq::Manager; `ls` reads the public settings.
#include <CLI/CLI.hpp>

#include "tools/cli/commands.h"
#include "tools/cli/output.h"
#include "tools/cli/signed.h"

namespace siomq::cli {
namespace {

using nlohmann::json;

// A realm's switch; absent is the server's default (`fallback`).
std::string yes_no(const json& realm, const char* key, bool fallback = false) {
  auto it = realm.find(key);
  bool v = it != realm.end() && it->is_boolean() ? it->get<bool>() : fallback;
  return v ? "yes" : "no";
}

std::string text_of(const json& realm, const char* key) {
  auto it = realm.find(key);
  if (it == realm.end() || it->is_null()) return "-";
  if (it->is_number_integer()) return iso_time(it->get<int64_t>());  // expires_at: Unix ms
  return it->is_string() ? it->get<std::string>() : dump(*it);
}

// The realms of the public settings ({ok, settings:{realms:{name:{...}}}}), as a table or JSON.
void print_realms(const Output& out, const std::string& answer) {
  json doc = json_or_string(answer);
  json realms = json::object();
  if (doc.is_object() && doc.contains("settings") && doc["settings"].is_object() && doc["settings"].contains("realms") &&
      doc["settings"]["realms"].is_object())
    realms = doc["settings"]["realms"];
  if (out.json()) {
    json list = json::array();
    for (const auto& [name, r] : realms.items()) {
      json item = r.is_object() ? r : json::object();
      item["name"] = name;
      list.push_back(item);
    }
    return out.print_json(json{{"realms", list}});
  }
  Table table({"REALM", "AUTH REQUIRED", "MANAGER KEY", "KEY", "ACCEPTANCE", "E2EE", "EPHEMERAL", "EXPIRES", "RENAMED TO"});
  for (const auto& [name, r] : realms.items()) {
    if (!r.is_object()) continue;
    table.add({name, yes_no(r, "required", true), yes_no(r, "manager_key_configured"), yes_no(r, "key_configured"),
               yes_no(r, "require_acceptance"), text_of(r, "e2ee"), yes_no(r, "ephemeral"), text_of(r, "expires_at"),
               text_of(r, "renamed_to")});
  }
  if (table.size() == 0) out.line("no realms");
  else table.print(out);
}

// on|off for the commands that switch something.
bool on(const std::string& v) { return v == "on" || v == "true" || v == "yes" || v == "required"; }

const std::vector<std::string> kSwitch{"on", "off", "true", "false", "yes", "no"};

struct RealmFlags {
  std::string name, value, to, manager_key, key, e2ee, ttl, sign_key, require_key;
  bool open = false, clear = false, ephemeral = false;
  std::optional<bool> acceptance;
};
using Flags = std::shared_ptr<RealmFlags>;

// A realm command on the realm named by its first argument, signed (with --manager-key when the command
// is one a realm's manager may send); `build` makes the call from the flags, `human` the line printed.
// `check`, when given, refuses flags that do not go together (its exit code, 0 when they do).
CLI::App* realm_command(Commands& commands, CLI::App& group, const Flags& f, const std::string& name,
                        const std::string& description, const std::string& examples, bool realm_scoped,
                        std::function<ManagerCall()> build, std::function<std::string()> human,
                        std::function<int(const RealmFlags&, const Output&)> check = {}) {
  std::string what = "realm " + name;
  CLI::App* cmd = commands.add(group, name, description, examples, [f, what, build, human, check](const Context& ctx, const Output& out) {
    if (int code = check ? check(*f, out) : 0) return code;
    return run_signed(what.c_str(), f->sign_key, ctx, out, build(), says(human()));
  });
  cmd->add_option("name", f->name, "Realm")->required();
  if (realm_scoped) cmd->add_option("--manager-key", f->sign_key, "Sign with the realm's manager key instead of the admin token");
  return cmd;
}

std::optional<std::string> key_or_clear(const RealmFlags& f) {
  if (f.clear) return std::nullopt;
  return f.value;
}

// `realm key` and `realm manager-key` take a key or --clear, not both, not neither.
int check_key(const RealmFlags& f, const Output& out) {
  if (f.value.empty() == f.clear) return kExitOk;
  return out.usage("give the key or --clear (one of them)");
}

void add_realm_management(Commands& commands, CLI::App& group) {
  auto a = std::make_shared<RealmFlags>();
  CLI::App* add_cmd = realm_command(
      commands, group, a, "add", "Create (or replace) a realm",
      "  siomq realm add r2 --manager-key mk-r2\n"
      "  siomq realm add lobby --open\n"
      "  siomq realm add demo --ephemeral --ttl 1h --e2ee required\n",
      false,
      [a]() -> ManagerCall {
        tyomq::RealmConfig c;
        c.realm = a->name;
        c.required = !a->open;
        c.manager_key = a->manager_key;
        c.key = a->key;
        c.require_acceptance = a->acceptance;
        c.e2ee = a->e2ee;
        c.ephemeral = a->ephemeral;
        c.ttl = a->ttl;
        return [c](tyomq::Manager& m) { return m.add_realm(c); };
      },
      [a]() { return "added realm " + a->name; });
  add_cmd->add_flag("--open", a->open, "Authentication not required");
  add_cmd->add_option("--manager-key", a->manager_key, "The new realm's manager key (it signs the realm's commands)");
  add_cmd->add_option("--key", a->key, "The realm's pre-shared key for consumers");
  add_cmd->add_option_function<bool>("--require-acceptance", [a](bool v) { a->acceptance = v; },
                                     "Producers need an approved enrolment (true|false)");
  add_cmd->add_option("--e2ee", a->e2ee, "E2EE policy")->check(CLI::IsMember({"off", "opportunistic", "required"}));
  add_cmd->add_flag("--ephemeral", a->ephemeral, "Removed when its ttl ends");
  add_cmd->add_option("--ttl", a->ttl, "Lifetime of an ephemeral realm: 1h, 2d, or seconds");

  auto r = std::make_shared<RealmFlags>();
  realm_command(commands, group, r, "rm", "Remove a realm (its tokens, queues and sockets go too)", "  siomq realm rm r2\n", false,
                [r]() -> ManagerCall { return [n = r->name](tyomq::Manager& m) { return m.remove_realm(n); }; },
                [r]() { return "removed realm " + r->name; });

  auto n = std::make_shared<RealmFlags>();
  CLI::App* rename_cmd = realm_command(
      commands, group, n, "rename", "Rename a realm (the old name stays locked)", "  siomq realm rename r2 r3\n", false,
      [n]() -> ManagerCall { return [from = n->name, to = n->to](tyomq::Manager& m) { return m.rename_realm(from, to); }; },
      [n]() { return "renamed realm " + n->name + " to " + n->to; });
  rename_cmd->add_option("to", n->to, "New name")->required();
}

void add_realm_settings(Commands& commands, CLI::App& group) {
  auto k = std::make_shared<RealmFlags>();
  CLI::App* key_cmd = realm_command(
      commands, group, k, "key", "Set or clear the realm's pre-shared key",
      "  siomq realm key r1 new-psk\n"
      "  siomq realm key r1 --clear\n"
      "  siomq realm key r1 psk --require-key on --manager-key mk-r1\n",
      true,
      [k]() -> ManagerCall {
        std::optional<bool> require;
        if (!k->require_key.empty()) require = on(k->require_key);
        return [realm = k->name, key = key_or_clear(*k), require](tyomq::Manager& m) { return m.set_realm_key(realm, key, require); };
      },
      [k]() { return k->clear ? "cleared the key of realm " + k->name : "set the key of realm " + k->name; }, check_key);
  key_cmd->add_option("key", k->value, "The key");
  key_cmd->add_flag("--clear", k->clear, "Remove the key");
  key_cmd->add_option("--require-key", k->require_key, "Consumers must present the key (on|off)")->check(CLI::IsMember(kSwitch));

  auto mk = std::make_shared<RealmFlags>();
  CLI::App* mk_cmd = realm_command(
      commands, group, mk, "manager-key", "Set or clear the realm's manager key",
      "  siomq realm manager-key r1 mk-new\n"
      "  siomq realm manager-key r1 --clear\n",
      false,
      [mk]() -> ManagerCall {
        return [realm = mk->name, key = key_or_clear(*mk)](tyomq::Manager& m) { return m.set_realm_manager_key(realm, key); };
      },
      [mk]() { return mk->clear ? "cleared the manager key of realm " + mk->name : "set the manager key of realm " + mk->name; },
      check_key);
  mk_cmd->add_option("key", mk->value, "The manager key");
  mk_cmd->add_flag("--clear", mk->clear, "Remove the manager key");

  auto au = std::make_shared<RealmFlags>();
  realm_command(commands, group, au, "auth", "Require authentication in the realm, or not",
                "  siomq realm auth r1 on\n  siomq realm auth lobby off\n", false,
                [au]() -> ManagerCall { return [realm = au->name, v = on(au->value)](tyomq::Manager& m) { return m.set_realm_auth(realm, v); }; },
                [au]() { return "realm " + au->name + ": authentication " + (on(au->value) ? "required" : "not required"); })
      ->add_option("state", au->value, "on|off")
      ->required()
      ->check(CLI::IsMember(kSwitch));

  auto ac = std::make_shared<RealmFlags>();
  realm_command(commands, group, ac, "acceptance", "Require an approved enrolment for producers, or not",
                "  siomq realm acceptance r1 on --manager-key mk-r1\n", true,
                [ac]() -> ManagerCall {
                  return [realm = ac->name, v = on(ac->value)](tyomq::Manager& m) { return m.set_realm_acceptance(realm, v); };
                },
                [ac]() { return "realm " + ac->name + ": acceptance " + (on(ac->value) ? "required" : "not required"); })
      ->add_option("state", ac->value, "on|off")
      ->required()
      ->check(CLI::IsMember(kSwitch));

  auto e = std::make_shared<RealmFlags>();
  realm_command(commands, group, e, "e2ee", "Set the realm's E2EE policy", "  siomq realm e2ee r1 required\n", false,
                [e]() -> ManagerCall { return [realm = e->name, p = e->value](tyomq::Manager& m) { return m.set_realm_e2ee(realm, p); }; },
                [e]() { return "realm " + e->name + ": e2ee " + e->value; })
      ->add_option("policy", e->value, "off|opportunistic|required")
      ->required()
      ->check(CLI::IsMember({"off", "opportunistic", "required"}));

  auto l = std::make_shared<RealmFlags>();
  CLI::App* life_cmd = realm_command(
      commands, group, l, "lifetime", "Make the realm ephemeral (removed after --ttl) or permanent",
      "  siomq realm lifetime demo ephemeral --ttl 2h --manager-key mk-demo\n"
      "  siomq realm lifetime demo permanent\n",
      true,
      [l]() -> ManagerCall {
        return [realm = l->name, eph = l->value == "ephemeral", ttl = l->ttl](tyomq::Manager& m) {
          return m.set_realm_lifetime(realm, eph, ttl);
        };
      },
      [l]() { return "realm " + l->name + ": " + l->value + (l->ttl.empty() ? "" : " for " + l->ttl); });
  life_cmd->add_option("lifetime", l->value, "ephemeral|permanent")->required()->check(CLI::IsMember({"ephemeral", "permanent"}));
  life_cmd->add_option("--ttl", l->ttl, "With ephemeral: 1h, 2d, or seconds");
}

}  // namespace

void add_realm_commands(Commands& commands) {
  CLI::App* group = commands.group(commands.app(), "realm", "Manage tyo-mq realms (signed with the admin token or a realm's manager key)",
                                   "  siomq realm ls --admin-token $TYO_MQ_ADMIN_TOKEN\n"
                                   "  siomq realm add r2 --manager-key mk-r2\n");
  commands.add(*group, "ls", "List the realms (from the public settings)", "  siomq realm ls\n  siomq realm ls --json\n",
               [](const Context& ctx, const Output& out) {
                 return with_signer("realm ls", "", ctx, out, [&out](tyomq::Client& client, const std::string& secret) {
                   tyomq::Manager m(client, secret);
                   auto r = m.get_settings().get();
                   if (!r) return out.fail("realm ls", r.error());
                   print_realms(out, *r);
                   return static_cast<int>(kExitOk);
                 });
               });
  add_realm_management(commands, *group);
  add_realm_settings(commands, *group);
}

}  // namespace siomq::cli
