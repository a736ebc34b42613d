// `siomq ping`: tyo-mq PING round trips on the transport itself (it prints the Engine.IO session id,
// which the public client does not expose), one after another, with each round trip's time. It speaks
// WebSocket only: a refused upgrade is the answer, not a reason to fall back to long-polling.
#include <CLI/CLI.hpp>
#include <boost/asio/io_context.hpp>

#include <chrono>
#include <cstdio>

#include "tools/cli/commands.h"
#include "tools/cli/output.h"
#include "transport/sio_client.h"

namespace siomq::cli {
namespace {

using nlohmann::json;

struct PingFlags {
  std::vector<std::string> url;  // --url, the older spelling of --server
  int count = 1;
  std::string payload = "{}";
};

int ping(const PingFlags& f, const Context& ctx, const Output& out) {
  client::ClientOptions options;
  options.eio = ctx.eio;
  options.ca_file = ctx.ca;
  options.polling_fallback = false;
  std::string url = f.url.empty() ? ctx.servers.front() : f.url.front();
  if (!client::parse_url(url, options)) return out.usage("bad URL " + url);
  boost::asio::io_context io;
  auto c = std::make_shared<client::SioClient>(io, options);
  std::optional<std::string> failure;
  int left = f.count;
  using Clock = std::chrono::steady_clock;
  Clock::time_point sent;
  double total_ms = 0;
  json replies = json::array();
  std::function<void()> next = [&] {
    sent = Clock::now();
    c->emit("PING", f.payload, [&](const client::SioClient::Incoming& ack) {
      double ms = std::chrono::duration<double, std::milli>(Clock::now() - sent).count();
      total_ms += ms;
      if (out.json()) {
        replies.push_back(json{{"reply", json_or_string(ack.json)}, {"ms", ms}});
      } else {
        char line[64];
        std::snprintf(line, sizeof line, " %.3f ms", ms);
        out.line(ack.json + line);
      }
      if (--left > 0) next();
      else c->close();
    });
  };
  c->on_close([&](std::string_view reason) {
    if (left > 0) failure = std::string(reason);
  });
  c->connect([&](std::optional<std::string> why) {
    if (why) return;  // reported by on_close
    if (!out.json()) out.line("connected: socket " + c->socket_id() + ", session " + c->engine_id());
    next();
  });
  io.run();
  if (failure) return out.fail("ping", Error{errc::unreachable, *failure});
  double average = total_ms / f.count;
  if (out.json()) {
    out.print_json(json{{"socket", c->socket_id()}, {"session", c->engine_id()}, {"replies", replies}, {"average_ms", average}});
  } else {
    char line[96];
    std::snprintf(line, sizeof line, "%d pings, average %.3f ms", f.count, average);
    out.line(line);
  }
  return kExitOk;
}

}  // namespace

void add_ping_command(Commands& commands) {
  auto f = std::make_shared<PingFlags>();
  CLI::App* cmd = commands.add(commands.app(), "ping", "PING the server (tyo-mq) and print each reply and its round trip",
                               "  siomq ping\n"
                               "  siomq ping -s https://mq.example.com --ca ca.pem -n 10\n"
                               "  siomq ping --payload '{\"who\":\"me\"}' --json\n",
                               [f](const Context& ctx, const Output& out) { return ping(*f, ctx, out); });
  cmd->add_option("--url", f->url, "Server URL (the same as --server)")->group("Context (flag > environment > context file > default)");
  cmd->add_option("-n,--count", f->count, "Number of PINGs, one after another")->capture_default_str()->check(CLI::PositiveNumber);
  cmd->add_option("--payload", f->payload, "PING payload (JSON)")->capture_default_str();
}

}  // namespace siomq::cli
