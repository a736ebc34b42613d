// `siomq completion bash`: a bash completion script, written from the command tree itself so that it
// always lists the commands and flags this binary has.
#include <CLI/CLI.hpp>

#include <cstdio>

#include "tools/cli/commands.h"
#include "tools/cli/output.h"

namespace siomq::cli {
namespace {

struct Node {
  std::string path;  // "", "bus", "bus pub"
  std::vector<std::string> subcommands, flags;
};

void walk(const CLI::App& app, const std::string& path, std::vector<Node>& out) {
  Node node{path, {}, {}};
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    node.subcommands.push_back(sub->get_name());
    walk(*sub, path.empty() ? sub->get_name() : path + " " + sub->get_name(), out);
  }
  for (const CLI::Option* opt : app.get_options()) {
    if (opt->get_positional()) continue;
    for (const auto& l : opt->get_lnames()) node.flags.push_back("--" + l);
    for (const auto& s : opt->get_snames()) node.flags.push_back("-" + s);
  }
  out.push_back(std::move(node));
}

std::string bash_script(const CLI::App& app) {
  std::vector<Node> nodes;
  walk(app, "", nodes);
  std::string subs, words;
  for (const auto& n : nodes) {
    std::string label = "    \"" + n.path + "\") echo \"";
    subs += label + join(n.subcommands, " ") + "\" ;;\n";
    std::vector<std::string> all = n.subcommands;
    all.insert(all.end(), n.flags.begin(), n.flags.end());
    words += label + join(all, " ") + "\" ;;\n";
  }
  return "# bash completion for siomq: source it, or save it as /etc/bash_completion.d/siomq\n"
         "# (written by `siomq completion bash`)\n"
         "_siomq_subcommands() {\n  case \"$1\" in\n" + subs + "  esac\n}\n"
         "_siomq_words() {\n  case \"$1\" in\n" + words + "  esac\n}\n"
         "_siomq() {\n"
         "  local cur=\"${COMP_WORDS[COMP_CWORD]}\" path=\"\" w i\n"
         "  for ((i = 1; i < COMP_CWORD; i++)); do\n"
         "    w=\"${COMP_WORDS[i]}\"\n"
         "    [[ $w == -* ]] && continue\n"
         "    case \" $(_siomq_subcommands \"$path\") \" in *\" $w \"*) path=\"${path:+$path }$w\" ;; esac\n"
         "  done\n"
         "  COMPREPLY=($(compgen -W \"$(_siomq_words \"$path\")\" -- \"$cur\"))\n"
         "}\n"
         "complete -F _siomq siomq\n";
}

}  // namespace

void add_completion_command(Commands& commands) {
  CLI::App& app = commands.app();
  CLI::App* group = commands.group(app, "completion", "Print a shell completion script",
                                   "  source <(siomq completion bash)\n"
                                   "  siomq completion bash > /etc/bash_completion.d/siomq\n");
  commands.add_plain(*group, "bash", "Print the bash completion script",
                     "  siomq completion bash > /etc/bash_completion.d/siomq\n  source <(siomq completion bash)\n", [&app]() {
    std::string script = bash_script(app);
    std::fwrite(script.data(), 1, script.size(), stdout);
    return static_cast<int>(kExitOk);
  });
}

}  // namespace siomq::cli
