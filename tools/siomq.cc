// siomq: the command-line client: `siomq ping` (a tyo-mq PING round trip over our C++ client),
// `siomq raw` (a Socket.IO session driven by JSON lines, tools/raw_session.h) and `siomq bench` (the load
// generator, tools/bench/load.h).
#include <CLI/CLI.hpp>
#include <boost/asio/io_context.hpp>

#include <chrono>
#include <cstdio>
#include <iostream>

#include "transport/sio_client.h"
#include "tools/bench/bus_load.h"
#include "tools/bench/load.h"
#include "tools/raw_session.h"

namespace {

using namespace siomq;

int ping(const std::string& url, int count, const std::string& payload, int eio, const std::string& ca_file) {
  client::ClientOptions options;
  options.eio = eio;
  options.ca_file = ca_file;
  if (!client::parse_url(url, options)) {
    std::cerr << "siomq: bad URL " << url << "\n";
    return 2;
  }
  boost::asio::io_context io;
  auto c = std::make_shared<client::SioClient>(io, options);
  int status = 0;
  int left = count;
  using Clock = std::chrono::steady_clock;
  Clock::time_point sent;
  double total_ms = 0;
  std::function<void()> next = [&] {
    sent = Clock::now();
    c->emit("PING", payload, [&](const client::SioClient::Incoming& ack) {
      double ms = std::chrono::duration<double, std::milli>(Clock::now() - sent).count();
      total_ms += ms;
      std::printf("%s %.3f ms\n", ack.json.c_str(), ms);
      if (--left > 0) next();
      else c->close();
    });
  };
  c->on_close([&](std::string_view reason) {
    if (left > 0) {
      std::cerr << "siomq: " << reason << "\n";
      status = 1;
    }
  });
  c->connect([&](std::optional<std::string> failure) {
    if (failure) return;  // reported by on_close
    std::printf("connected: socket %s, session %s\n", c->socket_id().c_str(), c->engine_id().c_str());
    next();
  });
  io.run();
  if (status == 0) std::printf("%d pings, average %.3f ms\n", count, total_ms / count);
  return status;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"siomq: command-line client for siomq and tyo-mq servers"};
  app.require_subcommand(1);
  std::string url = "http://127.0.0.1:17352";
  std::string ca_file;
  int count = 1;
  std::string payload = "{}";
  auto* ping_cmd = app.add_subcommand("ping", "PING the server (tyo-mq) and print each reply and its round trip");
  ping_cmd->add_option("--url", url, "Server URL")->capture_default_str();
  ping_cmd->add_option("-n,--count", count, "Number of PINGs, one after another")->capture_default_str()->check(CLI::PositiveNumber);
  ping_cmd->add_option("--payload", payload, "PING payload (JSON)")->capture_default_str();
  int eio = 4;
  ping_cmd->add_option("--ca", ca_file, "https/wss URLs: CA certificate (PEM) to verify the server with");
  ping_cmd->add_option("--eio", eio, "Engine.IO version: 4, or 3 for Socket.IO v2 servers")->capture_default_str()->check(CLI::IsMember({3, 4}));

  std::string raw_url = url, nsp = "/", auth, raw_ca;
  int raw_eio = 4;
  auto* raw_cmd = app.add_subcommand("raw", "A Socket.IO session: JSON lines on stdin are emits, answers and events are "
                                            "printed as JSON lines (formats: tools/raw_session.h, docs/bus.md)");
  raw_cmd->add_option("--url", raw_url, "Server URL")->capture_default_str();
  raw_cmd->add_option("--nsp", nsp, "Namespace to join")->capture_default_str();
  raw_cmd->add_option("--auth", auth, "CONNECT payload (a JSON object), e.g. {\"token\":\"...\"}");
  raw_cmd->add_option("--ca", raw_ca, "https/wss URLs: CA certificate (PEM) to verify the server with");
  raw_cmd->add_option("--eio", raw_eio, "Engine.IO version: 4, or 3 for Socket.IO v2 servers")->capture_default_str()->check(CLI::IsMember({3, 4}));

  bench::LoadOptions load;
  auto* bench_cmd = app.add_subcommand("bench", "Load generator: run a tyo-mq scenario against a server and report rates and latency");
  bench_cmd->add_option("scenario", load.scenario, "pubsub, fanout, topics, group, durable, latency, connections, chunked; the bus: bus-pubsub, bus-request, bus-stream, bus-pull")
      ->capture_default_str()
      ->check(CLI::IsMember({"pubsub", "fanout", "topics", "group", "durable", "latency", "connections", "chunked",
                             "bus-pubsub", "bus-request", "bus-stream", "bus-pull"}));
  bench_cmd->add_option("--url", load.url, "Server URL")->capture_default_str();
  bench_cmd->add_option("--ca", load.ca_file, "https/wss URLs: CA certificate (PEM) to verify the server with");
  bench_cmd->add_option("--eio", load.eio, "Engine.IO version: 4, or 3 for Socket.IO v2 servers")->capture_default_str()->check(CLI::IsMember({3, 4}));
  bench_cmd->add_option("-d,--duration", load.duration_s, "Seconds of sending")->capture_default_str()->check(CLI::PositiveNumber);
  bench_cmd->add_option("-s,--size", load.size, "Message bytes (chunked: 1 MiB unless given)")->capture_default_str();
  bench_cmd->add_option("-p,--producers", load.producers, "Producer connections")->capture_default_str()->check(CLI::PositiveNumber);
  bench_cmd->add_option("-c,--consumers", load.consumers, "Consumer connections")->capture_default_str()->check(CLI::PositiveNumber);
  bench_cmd->add_option("-r,--rate", load.rate, "Messages per second in total; 0 = max (latency: 10000 unless given)")->capture_default_str();
  bench_cmd->add_option("-w,--window", load.window, "Messages in flight at most (max rate)")->capture_default_str()->check(CLI::PositiveNumber);
  bench_cmd->add_option("-n,--connections", load.connections, "Idle connections (connections scenario)")->capture_default_str();
  bench_cmd->add_option("--server-pid", load.server_pid, "Server process, for its RSS (connections)");
  bench_cmd->add_flag("--json", load.json, "One JSON object instead of the table");
  bool quiet = false;
  bench_cmd->add_flag("-q,--quiet", quiet, "No progress lines on stderr");
  CLI11_PARSE(app, argc, argv);
  if (*ping_cmd) return ping(url, count, payload, eio, ca_file);
  if (*raw_cmd) return tools::raw_session(raw_url, nsp, auth, raw_eio, raw_ca);
  if (*bench_cmd) {
    load.progress = !quiet;
    return bench::is_bus_scenario(load.scenario) ? bench::run_bus_load(load) : bench::run_load(load);
  }
  return 0;
}
