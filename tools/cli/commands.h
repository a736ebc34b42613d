// How the command files put their commands into the `siomq` CLI: each command is a CLI11 subcommand with
// the context flags (tools/cli/context.h), an examples footer, and an action run after parsing with the
// resolved Context. One file a family: tyomq_commands.cc (pub, sub), bus_commands.cc, stream_commands.cc,
// consumer_commands.cc, auth_commands.cc, realm_commands.cc, manage_commands.cc, context_commands.cc,
// completion.cc, ping_command.cc, raw_bench_commands.cc.
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "tools/cli/context.h"

namespace CLI {
class App;
}

namespace siomq::cli {

class Output;

using Action = std::function<int(const Context&, const Output&)>;

class Commands {
 public:
  explicit Commands(CLI::App& app) : app_(app) {}
  CLI::App& app() { return app_; }

  // A command with the context flags; `action` runs when it is the command given. Its help ends with
  // `examples`, then `notes`, then the exit codes.
  CLI::App* add(CLI::App& parent, const std::string& name, const std::string& description, const std::string& examples,
                Action action, const std::string& notes = {});
  // A family of commands (stream, consumer, …): one of them must be given.
  CLI::App* group(CLI::App& parent, const std::string& name, const std::string& description, const std::string& examples);
  // A command with its own flags only (raw, bench).
  CLI::App* add_plain(CLI::App& parent, const std::string& name, const std::string& description,
                      const std::string& examples, std::function<int()> action);

  // Runs the command that was parsed; its exit code.
  int run();

 private:
  CLI::App& app_;
  ContextFlags flags_;
  std::vector<std::pair<CLI::App*, std::function<int()>>> actions_;
};

void add_tyomq_commands(Commands& commands);
void add_bus_commands(Commands& commands);
void add_stream_commands(Commands& commands);
void add_consumer_commands(Commands& commands);
void add_auth_commands(Commands& commands);
void add_realm_commands(Commands& commands);
void add_manage_commands(Commands& commands);
void add_context_commands(Commands& commands);
void add_ping_command(Commands& commands);
void add_raw_bench_commands(Commands& commands);
void add_completion_command(Commands& commands);

// The top-level help's footer: exit codes and environment.
extern const char* const kMainFooter;

}  // namespace siomq::cli
