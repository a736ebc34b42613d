// `siomq raw` (a Socket.IO session driven by JSON lines, tools/raw_session.h) and `siomq bench` (the load
// generator, tools/bench/load.h). Both keep their own flags (--url, --ca, --eio) and the internal
// transport; they take no context.
#include <CLI/CLI.hpp>

#include "tools/bench/bus_load.h"
#include "tools/bench/load.h"
#include "tools/cli/commands.h"
#include "tools/raw_session.h"

namespace siomq::cli {
namespace {

struct RawFlags {
  std::string url = kDefaultServer, nsp = "/", auth, ca;
  int eio = 4;
};

struct BenchFlags {
  bench::LoadOptions load;
  std::vector<std::string> urls;  // --url, once per node
  bool quiet = false;
};

}  // namespace

void add_raw_bench_commands(Commands& commands) {
  CLI::App& app = commands.app();
  auto r = std::make_shared<RawFlags>();
  CLI::App* raw = commands.add_plain(app, "raw",
                                     "A Socket.IO session: JSON lines on stdin are emits, answers and events are "
                                     "printed as JSON lines (formats: tools/raw_session.h, docs/bus.md)",
                                     "  siomq raw --nsp /control\n"
                                     "  echo '{\"emit\":\"PING\",\"args\":[{}],\"ack\":\"1\"}' | siomq raw\n",
                                     [r]() { return tools::raw_session(r->url, r->nsp, r->auth, r->eio, r->ca); });
  raw->add_option("--url", r->url, "Server URL")->capture_default_str();
  raw->add_option("--nsp", r->nsp, "Namespace to join")->capture_default_str();
  raw->add_option("--auth", r->auth, "CONNECT payload (a JSON object), e.g. {\"token\":\"...\"}");
  raw->add_option("--ca", r->ca, "https/wss URLs: CA certificate (PEM) to verify the server with");
  raw->add_option("--eio", r->eio, "Engine.IO version: 4, or 3 for Socket.IO v2 servers")->capture_default_str()->check(CLI::IsMember({3, 4}));

  auto b = std::make_shared<BenchFlags>();
  bench::LoadOptions& load = b->load;
  CLI::App* bench_cmd = commands.add_plain(
      app, "bench", "Load generator: run a tyo-mq scenario against a server and report rates and latency",
      "  siomq bench pubsub -d 10 -p 2 -c 2\n"
      "  siomq bench bus-request --json -q\n"
      "  siomq bench fanout -c 50 --url http://node-a:17352 --url http://node-b:17352 --url http://node-c:17352\n",
      [b]() {
        b->load.progress = !b->quiet;
        if (!b->urls.empty()) {
          b->load.url = b->urls.front();
          b->load.consumer_urls.assign(b->urls.begin() + 1, b->urls.end());
        }
        return bench::is_bus_scenario(b->load.scenario) ? bench::run_bus_load(b->load) : bench::run_load(b->load);
      });
  bench_cmd->add_option("scenario", load.scenario, "pubsub, fanout, topics, group, durable, latency, connections, chunked; the bus: bus-pubsub, bus-request, bus-stream, bus-pull")
      ->capture_default_str()
      ->check(CLI::IsMember({"pubsub", "fanout", "topics", "group", "durable", "latency", "connections", "chunked",
                             "bus-pubsub", "bus-request", "bus-stream", "bus-pull"}));
  bench_cmd->add_option("--url", b->urls,
                        "Server URL; again for more nodes of a cluster: producers on the first, consumers spread over the others")
      ->default_str(load.url);
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
  bench_cmd->add_flag("-q,--quiet", b->quiet, "No progress lines on stderr");
}

}  // namespace siomq::cli
