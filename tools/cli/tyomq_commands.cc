// `siomq pub` and `siomq sub`: tyo-mq PRODUCE (with publisher confirms) and SUBSCRIBE (exact, topic,
// group, durable, ACK mode) on the public client (siomq/tyomq.h).
#include <CLI/CLI.hpp>
#include <unistd.h>

#include <atomic>
#include <limits>
#include <mutex>

#include "tools/cli/commands.h"
#include "tools/cli/connect.h"
#include "tools/cli/input.h"
#include "tools/cli/output.h"
#include "tools/cli/wait.h"

namespace siomq::cli {
namespace {

using nlohmann::json;

// The first server error a one-shot command heard (ERROR, AUTH_FAIL, RATE_LIMITED, …), if any.
class ErrorLatch {
 public:
  void set(const tyomq::ServerError& e) {
    std::lock_guard lock(mu_);
    if (!error_) error_ = Error{e.code, e.event + ": " + e.message};
  }
  std::optional<Error> get() const {
    std::lock_guard lock(mu_);
    return error_;
  }

 private:
  mutable std::mutex mu_;
  std::optional<Error> error_;
};

struct PubFlags {
  std::string event;
  std::optional<std::string> message;
  std::string producer = "siomq-cli";
  std::optional<int64_t> ttl;
  bool guaranteed = false;
  std::string broadcast;
  std::string group;
  bool confirm = false;
  bool as_string = false;
  int count = 1;
};

int pub(const PubFlags& f, const Context& ctx, const Output& out) {
  tyomq::ProduceRequest req;
  req.event = f.event;
  req.message = tyomq_message(body_from(f.message), f.as_string);
  req.from = f.producer;
  req.guaranteed = f.guaranteed;
  req.ttl_seconds = f.ttl;
  req.broadcast = !f.broadcast.empty();
  req.broadcast_scope = f.broadcast;
  req.group = f.group;

  auto client = connect_tyomq(ctx, true);
  if (!client) return out.fail("pub", client.error());
  auto errors = std::make_shared<ErrorLatch>();
  (*client)->on_error([errors](const tyomq::ServerError& e) {
    if (!is_flush_refusal(e)) errors->set(e);
  });
  if (auto st = (*client)->register_producer(f.producer); !st) return out.fail("pub", st.error());

  std::vector<std::future<Result<uint64_t>>> confirms;
  for (int i = 0; i < f.count; ++i) {
    if (f.confirm) {
      confirms.push_back((*client)->produce_confirmed(req));
    } else if (auto st = (*client)->produce(req); !st) {
      return out.fail("pub", st.error());
    }
    out.progress("published", i + 1, f.count);
  }
  json stored = json::array();
  uint64_t total = 0;
  for (auto& c : confirms) {
    auto r = c.get();
    if (!r) return out.fail("pub", r.error());
    stored.push_back(*r);
    total += *r;
  }
  if (auto st = flush(**client); !st) return out.fail("pub", st.error());
  if (auto e = errors->get()) return out.fail("pub", *e);

  if (out.json()) {
    json doc{{"event", f.event}, {"producer", f.producer}, {"published", f.count}};
    if (f.confirm) doc["stored"] = stored;
    out.print_json(doc);
  } else {
    std::string text = "published " + counted(f.count, "message") + " on '" + f.event + "' as '" + f.producer + "'";
    if (f.confirm) text += ", stored " + counted(static_cast<int64_t>(total), "copy", "copies");
    out.line(text);
  }
  return kExitOk;
}

struct SubFlags {
  std::string event;
  std::string producer = std::string(tyomq::kAllProducers);
  std::string consumer;
  bool topic = false;
  std::string group;
  bool durable = false;
  bool ack = false;
  int count = 0;
};

void print_delivery(const Output& out, const tyomq::ConsumedMessage& m, int n) {
  if (out.json()) {
    json doc{{"event", m.event}, {"from", m.from}, {"message", json_or_string(m.message)}};
    if (!m.msg_id.empty()) doc["msg_id"] = m.msg_id;
    if (m.delivery_attempt) doc["delivery_attempt"] = m.delivery_attempt;
    return out.print_json(doc);
  }
  std::string head = "[#" + std::to_string(n) + "] " + m.event + " from " + m.from;
  if (!m.msg_id.empty()) head += " (msg " + m.msg_id + ", attempt " + std::to_string(m.delivery_attempt) + ")";
  out.line(head + ": " + m.message);
}

// What the handlers share with the main thread; held by them, so it outlives the client's last handler.
struct SubState {
  Waiter waiter;
  std::atomic<int> received{0};
  std::atomic<bool> ready{false};
  ErrorLatch early;  // errors before the subscription is in place end the command
};

int sub(const SubFlags& f, const Context& ctx, const Output& out) {
  if (f.durable && f.consumer.empty()) return out.usage("sub --durable needs --consumer NAME (the queue's name)");
  std::string consumer = f.consumer.empty() ? "siomq-" + std::to_string(::getpid()) : f.consumer;
  auto state = std::make_shared<SubState>();
  auto client = connect_tyomq(ctx, true, Use::listening);
  if (!client) return out.fail("sub", client.error());

  (*client)->on_error([&out, state](const tyomq::ServerError& e) {
    if (is_flush_refusal(e)) return;
    if (!state->ready) return state->early.set(e);
    out.note(e.event + ": " + e.message + (e.code ? " (code " + std::to_string(e.code) + ")" : ""));
  });
  (*client)->connection().on_state([&out, state](State s, const std::string& reason) {
    if (!state->ready) return;
    if (s == State::reconnecting) out.note("disconnected (" + reason + "), reconnecting");
    if (s == State::connected) out.note("reconnected");
  });
  if (auto st = (*client)->register_consumer(consumer); !st) return out.fail("sub", st.error());

  tyomq::SubscribeRequest req;
  req.event = f.event;
  req.producer = f.producer;
  req.consumer = consumer;
  req.mode = f.topic ? "topic" : "";
  req.group = f.group;
  req.durable = f.durable;
  // ACKed here rather than by the library, so that the ACK is sent before the command can end (and a
  // delivery past --count is not ACKed: it goes to the next consumer).
  req.manual_ack = f.ack;
  int count = f.count;
  tyomq::Client* c = client->get();
  auto st = c->subscribe(req, [&out, state, count, c](const tyomq::ConsumedMessage& m) {
    int n = ++state->received;
    if (count > 0 && n > count) return;
    print_delivery(out, m, n);
    if (!m.msg_id.empty()) (void)c->ack(m.msg_id);
    if (count > 0 && n == count) state->waiter.done(kExitOk);
  });
  if (!st) return out.fail("sub", st.error());
  if (auto fl = flush(**client); !fl) return out.fail("sub", fl.error());
  if (auto e = state->early.get()) return out.fail("sub", *e);
  state->ready = true;
  out.note("subscribed to '" + f.event + "' from '" + f.producer + "' as '" + consumer + "'" +
           (count > 0 ? ", waiting for " + counted(count, "message") : ", waiting for messages"));

  auto end = state->waiter.wait(ctx.timeout);
  int received = std::min(state->received.load(), count > 0 ? count : std::numeric_limits<int>::max());
  // The ACKs sent so far reach the server before the connection closes.
  if (auto fl = flush(*c); !fl && end == Waiter::End::done) return out.fail("sub", fl.error());
  client->reset();
  if (end == Waiter::End::timeout && (received == 0 || (count > 0 && received < count))) {
    out.note("timeout: " + counted(received, "message") + " received");
    return kExitTimeout;
  }
  return kExitOk;
}

}  // namespace

void add_tyomq_commands(Commands& commands) {
  CLI::App& app = commands.app();
  auto p = std::make_shared<PubFlags>();
  CLI::App* pub_cmd = commands.add(app, "pub", "Publish a tyo-mq message (PRODUCE)",
                                   "  siomq pub orders.created '{\"id\":42}' --producer shop\n"
                                   "  echo '{\"id\":42}' | siomq pub orders.created --confirm --guaranteed\n"
                                   "  siomq pub alerts 'disk full' --broadcast realm\n"
                                   "  siomq pub load.test '{}' --count 1000 -q\n",
                                   [p](const Context& ctx, const Output& out) { return pub(*p, ctx, out); });
  pub_cmd->add_option("event", p->event, "Event name")->required();
  pub_cmd->add_option_function<std::string>("message", [p](const std::string& v) { p->message = v; },
                                            "Message: JSON, or text sent as a JSON string (default: stdin when piped)");
  pub_cmd->add_option("--producer", p->producer, "Producer name")->capture_default_str();
  pub_cmd->add_option_function<int64_t>(
      "--ttl",
      [p](int64_t v) {
        if (v < 0) throw CLI::ValidationError("--ttl", "must not be negative");
        p->ttl = v;
      },
      "Seconds the stored copies live");
  pub_cmd->add_flag("--guaranteed", p->guaranteed, "Store copies for offline subscribers even when not durable");
  pub_cmd->add_option("--broadcast", p->broadcast, "Broadcast to the realm or a group")->check(CLI::IsMember({"realm", "group"}));
  pub_cmd->add_option("--group", p->group, "Consumer group (with --broadcast group)");
  pub_cmd->add_flag("--confirm", p->confirm, "Wait for the publisher confirm and print the stored count");
  pub_cmd->add_flag("--string", p->as_string, "Send the message as a JSON string even when it is JSON");
  pub_cmd->add_option("--count", p->count, "Publish the message N times")->capture_default_str()->check(CLI::PositiveNumber);

  auto s = std::make_shared<SubFlags>();
  CLI::App* sub_cmd = commands.add(app, "sub", "Subscribe to a tyo-mq event and print each delivery",
                                   "  siomq sub orders.created\n"
                                   "  siomq sub 'orders/+/status' --topic --json\n"
                                   "  siomq sub jobs --consumer worker-1 --durable --ack --group workers\n"
                                   "  siomq sub orders.created --count 1 --timeout 10s\n",
                                   [s](const Context& ctx, const Output& out) { return sub(*s, ctx, out); },
                                   "Ends after --count messages, at --timeout (exit 4 if fewer came), or on Ctrl-C.\n"
                                   "Prints `siomq: subscribed ...` on stderr once the subscription is in place.");
  sub_cmd->add_option("event", s->event, "Event name, or an MQTT-style pattern with --topic")->required();
  sub_cmd->add_option("--producer", s->producer, "Producer name (TYO-MQ-ALL: any)")->capture_default_str();
  sub_cmd->add_option("--consumer", s->consumer, "Consumer name (default siomq-<pid>)");
  sub_cmd->add_flag("--topic", s->topic, "Topic mode: the event is a pattern (+ one level, # the rest)");
  sub_cmd->add_option("--group", s->group, "Consumer group: one delivery per group");
  sub_cmd->add_flag("--durable", s->durable, "Queue messages while offline (needs --consumer)");
  sub_cmd->add_flag("--ack", s->ack, "ACK mode: each delivery is acknowledged after it is printed");
  sub_cmd->add_option("--count", s->count, "Exit after N messages")->check(CLI::PositiveNumber);
}

}  // namespace siomq::cli
