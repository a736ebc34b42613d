// siomq: the command-line client for siomq and tyo-mq servers, in the spirit of the `nats` CLI. This is
// the entry point: it builds the command tree from tools/cli/*_commands.cc (tools/cli/commands.h), parses
// and runs the command given. Exit codes are tools/cli/output.h's; docs/cli.md describes every command.
#include <CLI/CLI.hpp>

#include <exception>
#include <iostream>

#include "tools/cli/commands.h"
#include "tools/cli/output.h"

int main(int argc, char** argv) {
  using namespace siomq::cli;
  try {
    CLI::App app{"siomq: command-line client for siomq and tyo-mq servers"};
    app.require_subcommand(1);
    Commands commands(app);
    add_tyomq_commands(commands);
    add_bus_commands(commands);
    add_stream_commands(commands);
    add_consumer_commands(commands);
    add_auth_commands(commands);
    add_realm_commands(commands);
    add_manage_commands(commands);
    add_context_commands(commands);
    add_ping_command(commands);
    add_raw_bench_commands(commands);
    add_completion_command(commands);
    app.footer(kMainFooter);
    try {
      app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
      int code = app.exit(e);
      return code == 0 ? kExitOk : kExitUsage;
    }
    return commands.run();
  } catch (const std::exception& e) {
    std::cerr << "siomq: " << e.what() << "\n";
    return kExitRefused;
  }
}
