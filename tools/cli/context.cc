// Contexts (tools/cli/context.h): the flags, the environment and the context file, resolved in that order.
#include "tools/cli/context.h"

#include <CLI/CLI.hpp>
#include <fcntl.h>
#include <nlohmann/json.hpp>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "tools/cli/duration.h"
#include "tools/cli/output.h"

namespace siomq::cli {
namespace {

using nlohmann::json;

std::optional<std::string> env(const char* name) {
  const char* v = std::getenv(name);
  if (!v || !*v) return std::nullopt;
  return std::string(v);
}

std::string str_of(const json& o, const char* key) {
  auto it = o.find(key);
  return it != o.end() && it->is_string() ? it->get<std::string>() : std::string();
}

SavedContext saved_of(const json& o) {
  SavedContext c;
  if (auto it = o.find("servers"); it != o.end() && it->is_array())
    for (const auto& s : *it)
      if (s.is_string()) c.servers.push_back(s.get<std::string>());
  c.token = str_of(o, "token");
  c.admin_token = str_of(o, "admin_token");
  c.control_token = str_of(o, "control_token");
  c.realm = str_of(o, "realm");
  c.ca = str_of(o, "ca");
  if (auto it = o.find("eio"); it != o.end() && it->is_number_integer()) c.eio = it->get<int>();
  return c;
}

json json_of(const SavedContext& c) {
  json o = json::object();
  o["servers"] = c.servers;
  auto put = [&o](const char* key, const std::string& v) {
    if (!v.empty()) o[key] = v;
  };
  put("token", c.token);
  put("admin_token", c.admin_token);
  put("control_token", c.control_token);
  put("realm", c.realm);
  put("ca", c.ca);
  if (c.eio) o["eio"] = c.eio;
  return o;
}

std::string home_dir() {
  if (auto h = env("HOME")) return *h;
  if (const passwd* pw = getpwuid(getuid()); pw && pw->pw_dir) return pw->pw_dir;
  return ".";
}

// mkdir -p with mode 0700 for what it creates.
bool make_dirs(const std::string& dir) {
  if (dir.empty()) return true;
  struct stat st{};
  if (::stat(dir.c_str(), &st) == 0) return S_ISDIR(st.st_mode);
  size_t slash = dir.find_last_of('/');
  if (slash != std::string::npos && slash > 0 && !make_dirs(dir.substr(0, slash))) return false;
  return ::mkdir(dir.c_str(), 0700) == 0 || errno == EEXIST;
}

// One value through the chain: the flag, the variable, the saved context.
void pick(std::string& out, std::string& source, const std::optional<std::string>& flag, const char* variable,
          const std::string& saved) {
  if (flag) {
    out = *flag;
    source = "flag";
  } else if (auto v = variable ? env(variable) : std::nullopt) {
    out = *v;
    source = "env";
  } else if (!saved.empty()) {
    out = saved;
    source = "context";
  } else {
    source = "default";
  }
}

}  // namespace

void add_context_flags(CLI::App& cmd, ContextFlags& f) {
  const char* group = "Context (flag > environment > context file > default)";
  cmd.add_option_function<std::vector<std::string>>(
         "-s,--server", [&f](const std::vector<std::string>& v) { f.servers = v; },
         "Server URL(s), repeatable or comma-separated (env SIOMQ_URL; default http://127.0.0.1:17352)")
      ->delimiter(',')
      ->type_name("URL")
      ->group(group);
  cmd.add_option_function<std::string>("--token", [&f](const std::string& v) { f.token = v; },
                                       "Token to authenticate with (env SIOMQ_TOKEN)")
      ->type_name("TOKEN")
      ->group(group);
  cmd.add_option_function<std::string>("--admin-token", [&f](const std::string& v) { f.admin_token = v; },
                                       "Admin token: signs manager commands (env TYO_MQ_ADMIN_TOKEN)")
      ->type_name("TOKEN")
      ->group(group);
  cmd.add_option_function<std::string>("--control-token", [&f](const std::string& v) { f.control_token = v; },
                                       "Token for the bus control plane (env SIOMQ_CONTROL_TOKEN; default: the admin token, then --token)")
      ->type_name("TOKEN")
      ->group(group);
  cmd.add_option_function<std::string>("--realm", [&f](const std::string& v) { f.realm = v; }, "Realm")
      ->type_name("REALM")
      ->group(group);
  cmd.add_option_function<std::string>("--ca", [&f](const std::string& v) { f.ca = v; },
                                       "https/wss: CA certificates (PEM) to verify the server with (env SIOMQ_CA)")
      ->type_name("FILE")
      ->group(group);
  cmd.add_option_function<int>("--eio", [&f](int v) { f.eio = v; }, "Engine.IO version: 4, or 3 for Socket.IO v2 servers")
      ->check(CLI::IsMember({3, 4}))
      ->group(group);
  cmd.add_option("--context", f.context, "Use this saved context instead of the current one")->type_name("NAME")->group(group);
  cmd.add_option_function<std::string>(
         "--timeout",
         [&f](const std::string& v) {
           auto d = parse_duration(v);
           // CLI11's way to refuse a value: the parse catches it (exit code 2).
           if (!d) throw CLI::ValidationError("--timeout", "not a duration: " + v + " (e.g. 500ms, 5s, 2m)");
           f.timeout = *d;
         },
         "How long to wait (e.g. 500ms, 5s, 2m); each command says what for")
      ->type_name("DURATION")
      ->group(group);
  cmd.add_flag("--json", f.json, "JSON output: one document, or one line per message")->group("Output");
  cmd.add_flag("-q,--quiet", f.quiet, "No progress on stderr")->group("Output");
}

std::string context_file_path() {
  if (auto p = env("SIOMQ_CONTEXT_FILE")) return *p;
  return home_dir() + "/.config/siomq/context.json";
}

Result<ContextFile> load_context_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return ContextFile{};
  std::stringstream text;
  text << in.rdbuf();
  auto doc = json::parse(text.str(), nullptr, false);
  if (doc.is_discarded() || !doc.is_object())
    return Error{errc::bad_request, "the context file " + path + " is not a JSON object"};
  ContextFile file;
  file.current = str_of(doc, "current");
  if (auto it = doc.find("contexts"); it != doc.end() && it->is_object())
    for (const auto& [name, value] : it->items())
      if (value.is_object()) file.contexts[name] = saved_of(value);
  return file;
}

Status save_context_file(const std::string& path, const ContextFile& file) {
  json doc = json::object();
  if (!file.current.empty()) doc["current"] = file.current;
  doc["contexts"] = json::object();
  for (const auto& [name, c] : file.contexts) doc["contexts"][name] = json_of(c);
  std::string text = dump(doc, 2) + "\n";
  size_t slash = path.find_last_of('/');
  if (slash != std::string::npos && !make_dirs(path.substr(0, slash)))
    return Error{0, "cannot create the folder of " + path + ": " + std::strerror(errno)};
  std::string tmp = path + ".tmp." + std::to_string(getpid());
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) return Error{0, "cannot write " + tmp + ": " + std::strerror(errno)};
  bool ok = ::fchmod(fd, 0600) == 0 && ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()) &&
            ::fsync(fd) == 0;
  int saved_errno = errno;
  ::close(fd);
  if (!ok || ::rename(tmp.c_str(), path.c_str()) != 0) {
    if (ok) saved_errno = errno;
    ::unlink(tmp.c_str());
    return Error{0, "cannot write " + path + ": " + std::strerror(saved_errno)};
  }
  return Ok{};
}

Result<Context> resolve(const ContextFlags& f) {
  Context ctx;
  ctx.file = context_file_path();
  auto file = load_context_file(ctx.file);
  if (!file) return file.error();
  SavedContext saved;
  ctx.name = f.context.empty() ? file->current : f.context;
  if (!ctx.name.empty()) {
    auto it = file->contexts.find(ctx.name);
    if (it != file->contexts.end()) saved = it->second;
    else if (!f.context.empty()) return Error{404, "no context named '" + f.context + "' in " + ctx.file};
    else ctx.name.clear();  // the current one was removed by hand: as if none
  }
  if (!f.servers.empty()) {
    ctx.servers = f.servers;
    ctx.source["servers"] = "flag";
  } else if (auto v = env("SIOMQ_URL")) {
    ctx.servers = split(*v);
    ctx.source["servers"] = "env";
  } else if (!saved.servers.empty()) {
    ctx.servers = saved.servers;
    ctx.source["servers"] = "context";
  }
  if (ctx.servers.empty()) {
    ctx.servers = {kDefaultServer};
    ctx.source["servers"] = "default";
  }
  pick(ctx.token, ctx.source["token"], f.token, "SIOMQ_TOKEN", saved.token);
  pick(ctx.admin_token, ctx.source["admin_token"], f.admin_token, "TYO_MQ_ADMIN_TOKEN", saved.admin_token);
  pick(ctx.control_token, ctx.source["control_token"], f.control_token, "SIOMQ_CONTROL_TOKEN", saved.control_token);
  pick(ctx.realm, ctx.source["realm"], f.realm, nullptr, saved.realm);
  pick(ctx.ca, ctx.source["ca"], f.ca, "SIOMQ_CA", saved.ca);
  if (f.eio) {
    ctx.eio = *f.eio;
    ctx.source["eio"] = "flag";
  } else if (saved.eio == 3 || saved.eio == 4) {
    ctx.eio = saved.eio;
    ctx.source["eio"] = "context";
  } else {
    ctx.source["eio"] = "default";
  }
  ctx.timeout = f.timeout;
  ctx.json = f.json;
  ctx.quiet = f.quiet;
  return ctx;
}

Options connection_options(const Context& ctx, Use use) {
  Options o;
  o.urls = ctx.servers;
  o.eio = ctx.eio;
  o.ca_file = ctx.ca;
  o.reconnect.enabled = use == Use::listening;
  if (use == Use::request && ctx.timeout) o.request_timeout = *ctx.timeout;
  return o;
}

std::string mask(const std::string& secret) { return secret.empty() ? "" : "********"; }

}  // namespace siomq::cli
