// `siomq consumer add|ls|info|rm|next`: the bus's consumers — managed on "/control", pulled (and acked)
// on "/" — through the public client (siomq/bus.h).
#include <CLI/CLI.hpp>

#include "tools/cli/bus_format.h"
#include "tools/cli/commands.h"
#include "tools/cli/connect.h"
#include "tools/cli/duration.h"
#include "tools/cli/output.h"

namespace siomq::cli {
namespace {

using nlohmann::json;
using std::chrono::milliseconds;

constexpr int kMaxBatch = 1000;  // the server's largest pull

int add(const bus::ConsumerConfig& c, const Context& ctx, const Output& out) {
  auto conn = connect_bus(ctx, true);
  if (!conn) return out.fail("consumer add", conn.error());
  auto r = (*conn)->add_consumer(c).get();
  if (!r) return out.fail("consumer add", r.error());
  if (out.json()) out.print_json(to_json(*r));
  else print_consumer(out, *r);
  return kExitOk;
}

int ls(const std::string& stream, const Context& ctx, const Output& out) {
  auto conn = connect_bus(ctx, true);
  if (!conn) return out.fail("consumer ls", conn.error());
  auto info = (*conn)->stream_info(stream).get();
  if (!info) return out.fail("consumer ls", info.error());
  json docs = json::array();
  Table table({"NAME", "FILTER", "MODE", "ACK", "DELIVERED", "ACK FLOOR", "PENDING", "ACK PENDING", "REDELIVERED"});
  for (const auto& c : info->consumers) {
    docs.push_back(to_json(c));
    table.add({c.name, c.config.filter_subject, c.config.deliver_subject.empty() ? "pull" : "push", c.config.ack_policy,
               std::to_string(c.delivered.stream_seq), std::to_string(c.ack_floor.stream_seq), std::to_string(c.num_pending),
               std::to_string(c.num_ack_pending), std::to_string(c.num_redelivered)});
  }
  if (out.json()) out.print_json(json{{"stream", stream}, {"consumers", docs}});
  else if (table.size() == 0) out.line("no consumers on " + stream);
  else table.print(out);
  return kExitOk;
}

struct Named {
  std::string stream, name;
};

int info(const Named& n, const Context& ctx, const Output& out) {
  auto conn = connect_bus(ctx, true);
  if (!conn) return out.fail("consumer info", conn.error());
  auto r = (*conn)->consumer_info(n.stream, n.name).get();
  if (!r) return out.fail("consumer info", r.error());
  if (out.json()) out.print_json(to_json(*r));
  else print_consumer(out, *r);
  return kExitOk;
}

int rm(const Named& n, const Context& ctx, const Output& out) {
  auto conn = connect_bus(ctx, true);
  if (!conn) return out.fail("consumer rm", conn.error());
  if (auto st = (*conn)->delete_consumer(n.stream, n.name).get(); !st) return out.fail("consumer rm", st.error());
  if (out.json()) out.print_json(json{{"stream", n.stream}, {"deleted", n.name}});
  else out.line("deleted consumer " + n.name + " of " + n.stream);
  return kExitOk;
}

struct NextFlags : Named {
  int count = 1;
  bool no_ack = false;
};

// Pulls until `count` messages came or a pull waited --timeout (default 5s) for nothing; acks each
// unless --no-ack.
int next(const NextFlags& f, const Context& ctx, const Output& out) {
  auto conn = connect_bus(ctx, false, Use::waiting);
  if (!conn) return out.fail("consumer next", conn.error());
  milliseconds wait = ctx.timeout_or(milliseconds(5000));
  int got = 0;
  while (got < f.count) {
    auto batch = (*conn)->pull(f.name, std::min(kMaxBatch, f.count - got), wait).get();
    if (!batch) return out.fail("consumer next", batch.error());
    if (batch->empty()) break;
    std::vector<std::future<Status>> acks;
    for (const auto& m : *batch) {
      ++got;
      if (out.json()) out.print_json(to_json(m));
      else print_message(out, m, got);
      if (!f.no_ack) acks.push_back((*conn)->ack(f.name, m.seq));
    }
    for (auto& a : acks)
      if (auto st = a.get(); !st) return out.fail("consumer next: ack", st.error());
    if (f.count > 1) out.progress("received " + std::to_string(got) + "/" + std::to_string(f.count) + (f.no_ack ? "" : ", acked"));
  }
  if (got == 0) {
    out.note("consumer next: no message within " + format_duration(wait));
    return kExitTimeout;
  }
  return kExitOk;
}

void named_args(CLI::App* cmd, Named& n) {
  cmd->add_option("stream", n.stream, "Stream name")->required();
  cmd->add_option("name", n.name, "Consumer name")->required();
}

}  // namespace

void add_consumer_commands(Commands& commands) {
  CLI::App* group = commands.group(commands.app(), "consumer", "Manage and pull the bus's consumers",
                                   "  siomq consumer add ORDERS billing --filter orders.eu\n"
                                   "  siomq consumer next ORDERS billing --count 10\n");

  auto c = std::make_shared<bus::ConsumerConfig>();
  CLI::App* add_cmd = commands.add(*group, "add", "Create a consumer on a stream (pull, or push with --deliver-subject)",
                                   "  siomq consumer add ORDERS billing --filter orders.eu --ack explicit --max-deliver 5\n"
                                   "  siomq consumer add ORDERS late --deliver by_start_seq --start-seq 100\n"
                                   "  siomq consumer add ORDERS pusher --deliver-subject push.orders --deliver-group g\n",
                                   [c](const Context& ctx, const Output& out) { return add(*c, ctx, out); });
  add_cmd->add_option("stream", c->stream, "Stream name")->required();
  add_cmd->add_option("name", c->name, "Consumer name (unique in the realm)")->required();
  add_cmd->add_option("--filter", c->filter_subject, "Only messages on this subject (pattern)");
  add_cmd->add_option("--deliver", c->deliver_policy, "Where to start")
      ->capture_default_str()
      ->check(CLI::IsMember({"all", "last", "new", "by_start_seq", "by_start_time"}));
  add_cmd->add_option("--start-seq", c->opt_start_seq, "With --deliver by_start_seq");
  add_cmd->add_option("--start-time-ms", c->opt_start_time_ms, "With --deliver by_start_time (Unix ms)");
  add_cmd->add_option("--ack", c->ack_policy, "Ack policy")->capture_default_str()->check(CLI::IsMember({"explicit", "none", "all"}));
  add_cmd->add_option("--ack-wait-ms", c->ack_wait_ms, "Redelivery after this long unacked")->capture_default_str();
  add_cmd->add_option("--max-deliver", c->max_deliver, "Deliveries at most, then the dead-letter stream (-1 unlimited)")
      ->capture_default_str();
  add_cmd->add_option("--backoff-ms", c->backoff_ms, "Redelivery delays, comma-separated (the last repeats)")->delimiter(',');
  add_cmd->add_option("--max-ack-pending", c->max_ack_pending, "Unacked messages at most")->capture_default_str();
  add_cmd->add_option("--deliver-subject", c->deliver_subject, "Push mode: deliver as core messages on this subject");
  add_cmd->add_option("--deliver-group", c->deliver_group, "Push mode: the queue group");

  auto s = std::make_shared<std::string>();
  CLI::App* ls_cmd = commands.add(*group, "ls", "List a stream's consumers (from the stream's info)", "  siomq consumer ls ORDERS\n",
                                  [s](const Context& ctx, const Output& out) { return ls(*s, ctx, out); });
  ls_cmd->add_option("stream", *s, "Stream name")->required();

  auto i = std::make_shared<Named>();
  named_args(commands.add(*group, "info", "A consumer's config and state", "  siomq consumer info ORDERS billing\n",
                          [i](const Context& ctx, const Output& out) { return info(*i, ctx, out); }),
             *i);

  auto r = std::make_shared<Named>();
  named_args(commands.add(*group, "rm", "Delete a consumer", "  siomq consumer rm ORDERS billing\n",
                          [r](const Context& ctx, const Output& out) { return rm(*r, ctx, out); }),
             *r);

  auto n = std::make_shared<NextFlags>();
  CLI::App* next_cmd = commands.add(*group, "next", "Pull messages from a pull consumer, print and ack them",
                                    "  siomq consumer next ORDERS billing\n"
                                    "  siomq consumer next ORDERS billing --count 100 --json\n"
                                    "  siomq consumer next ORDERS billing --no-ack --timeout 1s\n",
                                    [n](const Context& ctx, const Output& out) { return next(*n, ctx, out); },
                                    "--timeout: how long a pull waits for a message (default 5s); exit 4 when none came.");
  named_args(next_cmd, *n);
  next_cmd->add_option("--count", n->count, "Messages to pull")->capture_default_str()->check(CLI::PositiveNumber);
  next_cmd->add_flag("--no-ack", n->no_ack, "Leave them pending (redelivered after ack_wait)");
}

}  // namespace siomq::cli
