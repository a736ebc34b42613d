// `siomq context save|show|use|ls|rm`: the saved contexts (tools/cli/context.h). Secrets are never
// printed: `show` masks them.
#include <CLI/CLI.hpp>

#include "tools/cli/commands.h"
#include "tools/cli/output.h"

namespace siomq::cli {
namespace {

using nlohmann::json;

// What `save` stores: every value that did not come from the defaults.
SavedContext saved_of(const Context& ctx) {
  SavedContext c;
  auto given = [&ctx](const char* key) {
    auto it = ctx.source.find(key);
    return it != ctx.source.end() && it->second != "default";
  };
  if (given("servers")) c.servers = ctx.servers;
  c.token = ctx.token;
  c.admin_token = ctx.admin_token;
  c.control_token = ctx.control_token;
  c.realm = ctx.realm;
  c.ca = ctx.ca;
  if (given("eio")) c.eio = ctx.eio;
  return c;
}

json shown(const SavedContext& c) {
  return json{{"servers", c.servers},
              {"token", mask(c.token)},
              {"admin_token", mask(c.admin_token)},
              {"control_token", mask(c.control_token)},
              {"realm", c.realm},
              {"ca", c.ca},
              {"eio", c.eio ? json(c.eio) : json(nullptr)}};
}

int save(const std::string& name, const Context& ctx, const Output& out) {
  auto file = load_context_file(ctx.file);
  if (!file) return out.usage(file.error().message);
  file->contexts[name] = saved_of(ctx);
  bool select = file->current.empty() || !file->contexts.count(file->current);
  if (select) file->current = name;
  if (auto st = save_context_file(ctx.file, *file); !st) return out.fail("context save", st.error());
  if (out.json()) out.print_json(json{{"saved", name}, {"file", ctx.file}, {"current", file->current}});
  else out.line("saved context " + name + " in " + ctx.file + (select ? " (now the current one)" : ""));
  return kExitOk;
}

int show(const std::string& name, const Context& ctx, const Output& out) {
  if (!name.empty()) {
    auto file = load_context_file(ctx.file);
    if (!file) return out.usage(file.error().message);
    auto it = file->contexts.find(name);
    if (it == file->contexts.end()) return out.fail("context show", Error{404, "no context named '" + name + "' in " + ctx.file});
    json doc = shown(it->second);
    doc["name"] = name;
    if (out.json()) {
      out.print_json(doc);
      return kExitOk;
    }
    Fields f;
    f.add("Context", name).add("Servers", join(it->second.servers, ", ")).add("Token", doc["token"].get<std::string>());
    f.add("Admin token", doc["admin_token"].get<std::string>()).add("Control token", doc["control_token"].get<std::string>());
    f.add("Realm", it->second.realm).add("CA", it->second.ca).add("Engine.IO", it->second.eio ? std::to_string(it->second.eio) : "");
    f.print(out);
    return kExitOk;
  }
  auto src = [&ctx](const char* key) {
    auto it = ctx.source.find(key);
    return it == ctx.source.end() ? std::string("default") : it->second;
  };
  if (out.json()) {
    out.print_json(json{{"context", ctx.name.empty() ? json(nullptr) : json(ctx.name)},
                        {"file", ctx.file},
                        {"servers", ctx.servers},
                        {"token", mask(ctx.token)},
                        {"admin_token", mask(ctx.admin_token)},
                        {"control_token", mask(ctx.control_token)},
                        {"realm", ctx.realm},
                        {"ca", ctx.ca},
                        {"eio", ctx.eio},
                        {"source", ctx.source}});
    return kExitOk;
  }
  Table table({"SETTING", "VALUE", "FROM"});
  table.add({"servers", join(ctx.servers, ","), src("servers")});
  table.add({"token", mask(ctx.token), src("token")});
  table.add({"admin-token", mask(ctx.admin_token), src("admin_token")});
  table.add({"control-token", mask(ctx.control_token), src("control_token")});
  table.add({"realm", ctx.realm, src("realm")});
  table.add({"ca", ctx.ca, src("ca")});
  table.add({"eio", std::to_string(ctx.eio), src("eio")});
  out.line("context: " + (ctx.name.empty() ? std::string("(none)") : ctx.name) + " (file " + ctx.file + ")");
  table.print(out);
  return kExitOk;
}

int use(const std::string& name, const Context& ctx, const Output& out) {
  auto file = load_context_file(ctx.file);
  if (!file) return out.usage(file.error().message);
  if (!file->contexts.count(name)) return out.fail("context use", Error{404, "no context named '" + name + "' in " + ctx.file});
  file->current = name;
  if (auto st = save_context_file(ctx.file, *file); !st) return out.fail("context use", st.error());
  if (out.json()) out.print_json(json{{"current", name}});
  else out.line("using context " + name);
  return kExitOk;
}

int ls(const Context& ctx, const Output& out) {
  auto file = load_context_file(ctx.file);
  if (!file) return out.usage(file.error().message);
  json list = json::array();
  Table table({"NAME", "CURRENT", "SERVERS", "REALM"});
  for (const auto& [name, c] : file->contexts) {
    bool current = name == file->current;
    json item = shown(c);
    item["name"] = name;
    item["current"] = current;
    list.push_back(item);
    table.add({name, current ? "*" : "", join(c.servers, ","), c.realm});
  }
  if (out.json()) out.print_json(json{{"contexts", list}, {"file", ctx.file}});
  else if (table.size() == 0) out.line("no saved contexts in " + ctx.file);
  else table.print(out);
  return kExitOk;
}

int rm(const std::string& name, const Context& ctx, const Output& out) {
  auto file = load_context_file(ctx.file);
  if (!file) return out.usage(file.error().message);
  if (!file->contexts.erase(name)) return out.fail("context rm", Error{404, "no context named '" + name + "' in " + ctx.file});
  if (file->current == name) file->current.clear();
  if (auto st = save_context_file(ctx.file, *file); !st) return out.fail("context rm", st.error());
  if (out.json()) out.print_json(json{{"removed", name}});
  else out.line("removed context " + name);
  return kExitOk;
}

}  // namespace

void add_context_commands(Commands& commands) {
  CLI::App* group = commands.group(commands.app(), "context", "Saved contexts: servers and credentials by name",
                                   "  siomq context save --name prod --server https://mq.example.com --admin-token $T\n"
                                   "  siomq context use prod\n");
  auto save_name = std::make_shared<std::string>("default");
  commands
      .add(*group, "save", "Save the context given by flags and environment under a name (the first saved becomes current)",
           "  siomq context save --name dev --server http://127.0.0.1:17352 --token tok\n"
           "  SIOMQ_URL=https://a:17352,https://b:17352 siomq context save --name prod --ca ca.pem\n",
           [save_name](const Context& ctx, const Output& out) { return save(*save_name, ctx, out); })
      ->add_option("--name", *save_name, "Context name")
      ->capture_default_str();
  auto show_name = std::make_shared<std::string>();
  commands
      .add(*group, "show", "Show the context in effect and where each value comes from (secrets masked), or a saved one",
           "  siomq context show\n  siomq context show prod --json\n",
           [show_name](const Context& ctx, const Output& out) { return show(*show_name, ctx, out); })
      ->add_option("name", *show_name, "A saved context");
  auto use_name = std::make_shared<std::string>();
  commands
      .add(*group, "use", "Make a saved context the current one", "  siomq context use prod\n",
           [use_name](const Context& ctx, const Output& out) { return use(*use_name, ctx, out); })
      ->add_option("name", *use_name, "Context name")
      ->required();
  commands.add(*group, "ls", "List the saved contexts", "  siomq context ls\n",
               [](const Context& ctx, const Output& out) { return ls(ctx, out); });
  auto rm_name = std::make_shared<std::string>();
  commands
      .add(*group, "rm", "Remove a saved context", "  siomq context rm old\n",
           [rm_name](const Context& ctx, const Output& out) { return rm(*rm_name, ctx, out); })
      ->add_option("name", *rm_name, "Context name")
      ->required();
}

}  // namespace siomq::cli
