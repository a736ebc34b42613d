// The context of a command: which servers, with which credentials. Every value comes from the first
// of: its flag, its environment variable, the saved context file, the default —
//   --server URL (repeatable, comma-separated)  SIOMQ_URL (comma-separated)   default http://127.0.0.1:17352
//   --token T                                    SIOMQ_TOKEN
//   --admin-token T (signs manager commands)     TYO_MQ_ADMIN_TOKEN
//   --control-token T (the bus's "/control")     SIOMQ_CONTROL_TOKEN
//   --ca FILE                                    SIOMQ_CA
//   --realm R, --eio 3|4                         (no variable)
// The context file ($SIOMQ_CONTEXT_FILE or ~/.config/siomq/context.json, written mode 0600) holds named
// contexts and the current one's name; --context NAME picks another for one command.
#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "siomq/connection.h"
#include "siomq/result.h"

namespace CLI {
class App;
}

namespace siomq::cli {

inline constexpr const char* kDefaultServer = "http://127.0.0.1:17352";

// What the flags said; nullopt / empty: not given.
struct ContextFlags {
  std::vector<std::string> servers;
  std::optional<std::string> token, admin_token, control_token, realm, ca;
  std::optional<int> eio;
  std::string context;
  std::optional<std::chrono::milliseconds> timeout;
  bool json = false;
  bool quiet = false;
};

// One named context of the file.
struct SavedContext {
  std::vector<std::string> servers;
  std::string token, admin_token, control_token, realm, ca;
  int eio = 0;  // 0: not set
};

struct ContextFile {
  std::string current;
  std::map<std::string, SavedContext> contexts;
};

// The values a command runs with, and where each came from: "flag", "env", "context" or "default".
struct Context {
  std::vector<std::string> servers;
  std::string token, admin_token, control_token, realm, ca;
  int eio = 4;
  std::optional<std::chrono::milliseconds> timeout;  // --timeout; each command has its own default
  bool json = false;
  bool quiet = false;
  std::string name;  // the saved context in use ("" when none)
  std::string file;  // the context file's path
  std::map<std::string, std::string> source;

  std::chrono::milliseconds timeout_or(std::chrono::milliseconds fallback) const { return timeout.value_or(fallback); }
};

// Adds the context flags, --json and -q to a command (in the help's "Context" group).
void add_context_flags(CLI::App& cmd, ContextFlags& flags);

std::string context_file_path();
// A file that does not exist is an empty one; one that is not a context file is an Error.
Result<ContextFile> load_context_file(const std::string& path);
// Writes the whole file through a temporary one (mode 0600) renamed over it; creates its folder (0700).
Status save_context_file(const std::string& path, const ContextFile& file);

// Flags over environment over the file's context over defaults. Errors: an unreadable file (code 400),
// --context naming a context the file does not have (code 404).
Result<Context> resolve(const ContextFlags& flags);

// How a command uses its connection, for its options.
enum class Use {
  request,  // one-shot; --timeout bounds each answer (default 10 s)
  waiting,  // one-shot whose --timeout means something of its own (req, consumer next, auth request --wait)
  listening,  // long-running (sub, reply): reconnects once connected; a server that is not there at
              // the start is still exit code 3
};
Options connection_options(const Context& ctx, Use use);

// A secret as shown by `context show`: "********" (or "" when unset).
std::string mask(const std::string& secret);

}  // namespace siomq::cli
