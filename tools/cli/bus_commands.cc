// `siomq bus pub|sub`, `siomq req` and `siomq reply` (also as `bus req|reply`): the bus's core messaging
// on the public client (siomq/bus.h) — publish (or a stream publish with --ack), subscribe with queue
// groups, request/reply.
#include <CLI/CLI.hpp>

#include <atomic>
#include <limits>

#include "tools/cli/bus_format.h"
#include "tools/cli/commands.h"
#include "tools/cli/connect.h"
#include "tools/cli/input.h"
#include "tools/cli/output.h"
#include "tools/cli/wait.h"

namespace siomq::cli {
namespace {

using nlohmann::json;
using std::chrono::milliseconds;

struct PubFlags {
  std::string subject;
  std::optional<std::string> data;
  std::vector<std::string> headers;
  std::string reply;
  int count = 1;
  bool ack = false;
  std::string msg_id;
  std::string stream;
  std::optional<uint64_t> expect_last_seq;
};

int bus_pub(const PubFlags& f, const Context& ctx, const Output& out) {
  auto header = parse_headers(f.headers);
  if (!header) return out.usage(header.error().message);
  if (!f.ack && (!f.msg_id.empty() || !f.stream.empty() || f.expect_last_seq))
    return out.usage("--msg-id, --stream and --expect-last-seq need --ack (a stream publish)");
  std::string data = body_from(f.data);
  auto conn = connect_bus(ctx, false);
  if (!conn) return out.fail("bus pub", conn.error());
  json acks = json::array();
  for (int i = 0; i < f.count; ++i) {
    if (f.ack) {
      bus::PublishOptions o;
      o.header = *header;
      o.msg_id = f.msg_id;
      o.stream = f.stream;
      o.expect_last_seq = f.expect_last_seq;
      auto r = (*conn)->stream_publish(f.subject, data, o).get();
      if (!r) return out.fail("bus pub", r.error());
      acks.push_back(json{{"stream", r->stream}, {"seq", r->seq}, {"duplicate", r->duplicate}});
      if (!out.json())
        out.line("stored in " + r->stream + " seq " + std::to_string(r->seq) + (r->duplicate ? " (duplicate)" : ""));
    } else if (auto st = (*conn)->publish(f.subject, data, *header, f.reply); !st) {
      return out.fail("bus pub", st.error());
    }
    out.progress("published", i + 1, f.count);
  }
  if (auto st = flush(**conn); !st) return out.fail("bus pub", st.error());
  if (out.json()) {
    json doc{{"subject", f.subject}, {"published", f.count}};
    if (f.ack) doc["acks"] = acks;
    out.print_json(doc);
  } else if (!f.ack) {
    out.line("published " + counted(f.count, "message") + " (" +
             std::to_string(data.size()) + " bytes) on '" + f.subject + "'");
  }
  return kExitOk;
}

// What a subscriber's handler shares with the main thread; the handler holds it.
struct Listening {
  Waiter waiter;
  std::atomic<int> seen{0};
};

struct SubFlags {
  std::string subject;
  std::string queue;
  int count = 0;
  std::string response;  // reply only
};

// Subscribes `f.subject` (queue `f.queue`) and calls `each` for the first `f.count` messages (all when
// 0), then waits for the count, --timeout or Ctrl-C. `what` names the command in messages; `doing` is
// what the ready line on stderr says it does ("subscribed to", "answering").
int listen(const char* what, const char* doing, const SubFlags& f, const Context& ctx, const Output& out,
           std::function<void(bus::Conn&, const bus::Message&, int)> each) {
  auto state = std::make_shared<Listening>();
  auto conn = connect_bus(ctx, false, Use::listening);
  if (!conn) return out.fail(what, conn.error());
  bus::Conn* c = conn->get();
  int count = f.count;
  auto sub = c->subscribe(f.subject, f.queue, [c, state, count, each](const bus::Message& m) {
    int n = ++state->seen;
    if (count > 0 && n > count) return;
    each(*c, m, n);
    if (count > 0 && n == count) state->waiter.done(kExitOk);
  }).get();
  if (!sub) return out.fail(what, sub.error());
  c->connection().on_state([&out](State s, const std::string& reason) {
    if (s == State::reconnecting) out.note("disconnected (" + reason + "), reconnecting");
    if (s == State::connected) out.note("reconnected");
  });
  out.note(std::string(doing) + " '" + f.subject + "'" +
           (f.queue.empty() ? "" : " in queue '" + f.queue + "'") +
           (count > 0 ? ", waiting for " + counted(count, "message") : ", waiting for messages"));
  auto end = state->waiter.wait(ctx.timeout);
  int seen = std::min(state->seen.load(), count > 0 ? count : std::numeric_limits<int>::max());
  if (auto st = flush(*c); !st && end == Waiter::End::done) return out.fail(what, st.error());
  (void)sub->close();
  conn->reset();
  if (end == Waiter::End::timeout && (seen == 0 || (count > 0 && seen < count))) {
    out.note("timeout: " + counted(seen, "message") + " received");
    return kExitTimeout;
  }
  return kExitOk;
}

int bus_sub(const SubFlags& f, const Context& ctx, const Output& out) {
  return listen("bus sub", "subscribed to", f, ctx, out, [&out](bus::Conn&, const bus::Message& m, int n) {
    if (out.json()) out.print_json(to_json(m));
    else print_message(out, m, n);
  });
}

int reply(const SubFlags& f, const Context& ctx, const Output& out) {
  std::string response = f.response;
  return listen("reply", "answering", f, ctx, out, [&out, response](bus::Conn& c, const bus::Message& m, int n) {
    if (m.reply.empty()) {
      out.note("a message on '" + m.subject + "' without a reply subject: not answered");
    } else if (auto st = c.publish(m.reply, response); !st) {
      out.note("reply: " + st.error().message);
    }
    if (out.json()) out.print_json(to_json(m));
    else print_message(out, m, n);
  });
}

struct ReqFlags {
  std::string subject;
  std::optional<std::string> data;
  std::vector<std::string> headers;
};

int req(const ReqFlags& f, const Context& ctx, const Output& out) {
  auto header = parse_headers(f.headers);
  if (!header) return out.usage(header.error().message);
  std::string data = body_from(f.data);
  auto conn = connect_bus(ctx, false, Use::waiting);
  if (!conn) return out.fail("req", conn.error());
  auto r = (*conn)->request(f.subject, data, ctx.timeout_or(milliseconds(5000)), *header).get();
  if (!r) return out.fail("req", r.error());
  if (out.json()) {
    out.print_json(to_json(*r));
  } else {
    for (const auto& [k, v] : r->header) out.line(k + ": " + v);
    out.line(r->data);
  }
  return kExitOk;
}

void add_req_reply(Commands& commands, CLI::App& parent, const std::string& prefix) {
  auto q = std::make_shared<ReqFlags>();
  CLI::App* req_cmd = commands.add(parent, "req", "Send a request and print the first reply (the bus)",
                                   "  siomq " + prefix + "req svc.echo hello\n"
                                   "  siomq " + prefix + "req svc.time '' --timeout 2s --json\n"
                                   "  siomq " + prefix + "req svc.echo hello --header Trace-Id:t1\n",
                                   [q](const Context& ctx, const Output& out) { return req(*q, ctx, out); },
                                   "--timeout: how long to wait for the reply (default 5s); exit 4 after it, 1 when nobody listens (503).");
  req_cmd->add_option("subject", q->subject, "Subject")->required();
  req_cmd->add_option_function<std::string>("data", [q](const std::string& v) { q->data = v; }, "Data (default: stdin when piped)");
  req_cmd->add_option("-H,--header", q->headers, "Header Key:Value (repeatable)");

  auto r = std::make_shared<SubFlags>();
  CLI::App* reply_cmd = commands.add(parent, "reply", "Answer each request on a subject with a fixed response (the bus)",
                                     "  siomq " + prefix + "reply svc.echo pong\n"
                                     "  siomq " + prefix + "reply 'svc.>' ok --queue svc --count 1\n",
                                     [r](const Context& ctx, const Output& out) { return reply(*r, ctx, out); },
                                     "Prints `siomq: answering ...` on stderr once subscribed; ends after --count, at --timeout or on Ctrl-C.");
  reply_cmd->add_option("subject", r->subject, "Subject (wildcards * and > allowed)")->required();
  reply_cmd->add_option("response", r->response, "The response sent to every request")->required();
  reply_cmd->add_option("--queue", r->queue, "Queue group: one member answers each request");
  reply_cmd->add_option("--count", r->count, "Exit after N requests")->check(CLI::PositiveNumber);
}

}  // namespace

void add_bus_commands(Commands& commands) {
  CLI::App& app = commands.app();
  CLI::App* bus = commands.group(app, "bus", "The bus's core messaging: subjects, queue groups, request/reply",
                                 "  siomq bus pub orders.eu 'order 42'\n"
                                 "  siomq bus sub 'orders.>' --queue workers\n");

  auto p = std::make_shared<PubFlags>();
  CLI::App* pub_cmd = commands.add(*bus, "pub", "Publish on a subject (with --ack: a stream publish, answered once stored)",
                                   "  siomq bus pub orders.eu 'order 42'\n"
                                   "  siomq bus pub orders.eu 'order 42' --ack --msg-id order-42\n"
                                   "  cat payload.bin | siomq bus pub blobs.in --header Content-Type:application/octet-stream\n"
                                   "  siomq bus pub load.test x --count 10000 -q\n",
                                   [p](const Context& ctx, const Output& out) { return bus_pub(*p, ctx, out); });
  pub_cmd->add_option("subject", p->subject, "Subject")->required();
  pub_cmd->add_option_function<std::string>("data", [p](const std::string& v) { p->data = v; }, "Data (default: stdin when piped)");
  pub_cmd->add_option("-H,--header", p->headers, "Header Key:Value (repeatable)");
  pub_cmd->add_option("--reply", p->reply, "Reply subject");
  pub_cmd->add_option("--count", p->count, "Publish N times")->capture_default_str()->check(CLI::PositiveNumber);
  pub_cmd->add_flag("--ack", p->ack, "Stream publish: wait until the stream stored it and print the stream and seq");
  pub_cmd->add_option("--msg-id", p->msg_id, "With --ack: dedup id within the stream's window");
  pub_cmd->add_option("--stream", p->stream, "With --ack: the stream that must bind the subject");
  pub_cmd->add_option_function<uint64_t>("--expect-last-seq", [p](uint64_t v) { p->expect_last_seq = v; },
                                         "With --ack: publish only if the stream's last seq is this (409 otherwise)");

  auto s = std::make_shared<SubFlags>();
  CLI::App* sub_cmd = commands.add(*bus, "sub", "Subscribe to a subject and print each message",
                                   "  siomq bus sub 'orders.>'\n"
                                   "  siomq bus sub orders.eu --queue workers --count 10 --json\n",
                                   [s](const Context& ctx, const Output& out) { return bus_sub(*s, ctx, out); },
                                   "Ends after --count messages, at --timeout (exit 4 if fewer came), or on Ctrl-C.\n"
                                   "Prints `siomq: subscribed to ...` on stderr once subscribed.");
  sub_cmd->add_option("subject", s->subject, "Subject (wildcards * and > allowed)")->required();
  sub_cmd->add_option("--queue", s->queue, "Queue group: one member gets each message");
  sub_cmd->add_option("--count", s->count, "Exit after N messages")->check(CLI::PositiveNumber);

  add_req_reply(commands, app, "");
  add_req_reply(commands, *bus, "bus ");
}

}  // namespace siomq::cli
