// The command registry (tools/cli/commands.h): subcommands with the context flags, and the dispatch to
// the one that was parsed.
#include "tools/cli/commands.h"

#include <CLI/CLI.hpp>

#include "tools/cli/output.h"

namespace siomq::cli {
namespace {

std::string footer_of(const std::string& examples) { return examples.empty() ? std::string() : "\nExamples:\n" + examples; }

constexpr const char* kExitCodes =
    "\nExit codes: 0 ok, 1 refused by the server, 2 usage, 3 cannot connect, 4 timeout, 5 not found.";

}  // namespace

const char* const kMainFooter = R"(
Exit codes: 0 ok, 1 the server refused (its code and message are printed), 2 usage error,
            3 cannot connect, 4 timeout, 5 not found (404).
Environment: SIOMQ_URL, SIOMQ_TOKEN, TYO_MQ_ADMIN_TOKEN, SIOMQ_CONTROL_TOKEN, SIOMQ_CA,
             SIOMQ_CONTEXT_FILE (default ~/.config/siomq/context.json).
Precedence: flag > environment > saved context > default (http://127.0.0.1:17352).
`siomq <command> --help` shows a command's flags and examples; docs/cli.md has them all.

Examples:
  siomq pub orders.created '{"id":1}' --producer shop
  siomq sub orders.created --count 1 --json
  siomq bus req svc.echo hello --timeout 2s
  siomq stream add ORDERS --subjects 'orders.>'
  siomq --help; siomq completion bash > /etc/bash_completion.d/siomq)";

CLI::App* Commands::add(CLI::App& parent, const std::string& name, const std::string& description,
                        const std::string& examples, Action action, const std::string& notes) {
  CLI::App* cmd = parent.add_subcommand(name, description);
  cmd->footer(footer_of(examples) + (notes.empty() ? "" : "\n" + notes) + kExitCodes);
  add_context_flags(*cmd, flags_);
  actions_.emplace_back(cmd, [this, action = std::move(action)]() -> int {
    Output plain(flags_.json, flags_.quiet);
    auto ctx = resolve(flags_);
    if (!ctx) {
      plain.note(ctx.error().message);
      return ctx.error().code == 404 ? kExitNotFound : kExitUsage;
    }
    return action(*ctx, plain);
  });
  return cmd;
}

CLI::App* Commands::group(CLI::App& parent, const std::string& name, const std::string& description,
                          const std::string& examples) {
  CLI::App* cmd = parent.add_subcommand(name, description);
  cmd->footer(footer_of(examples));
  cmd->require_subcommand(1);
  return cmd;
}

CLI::App* Commands::add_plain(CLI::App& parent, const std::string& name, const std::string& description,
                              const std::string& examples, std::function<int()> action) {
  CLI::App* cmd = parent.add_subcommand(name, description);
  cmd->footer(footer_of(examples));
  actions_.emplace_back(cmd, std::move(action));
  return cmd;
}

int Commands::run() {
  for (auto& [cmd, action] : actions_)
    if (cmd->parsed()) return action();
  return kExitUsage;
}

}  // namespace siomq::cli
