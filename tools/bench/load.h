// `siomq bench`: the load generator. It speaks only the tyo-mq wire protocol (Engine.IO v4, or v3 for
// Socket.IO v2 servers), so one run works against siomq and against any tyo-mq server.
//
// Scenarios: pubsub (P producers → C consumers, every consumer subscribed to every producer), fanout
// (1 → N), topics (wildcard subscribers), group (N workers share a group: one delivery per message),
// durable (durable + ACK mode, every delivery ACKed), latency (a fixed rate, one-way latency measured from
// each message's intended send time, so a stall is not hidden: coordinated omission), connections (N
// idle clients; the server's RSS per connection with --server-pid), chunked (1 MiB messages). With several
// URLs (a cluster), producers use the first and consumers the others: what crosses nodes is measured.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace siomq::bench {

struct LoadOptions {
  std::string scenario = "pubsub";
  std::string url = "http://127.0.0.1:17352";  // https:// or wss:// for TLS; the producers' node
  // More nodes of a cluster (docs/scale-out.md): the consumers are spread over these, round-robin, while
  // the producers stay on `url`. Empty: everyone on `url`. tyo-mq scenarios, bus-pubsub and bus-request.
  std::vector<std::string> consumer_urls;
  std::string ca_file;                         // TLS: the CA (PEM) that signed the server's certificate
  int eio = 4;
  double duration_s = 10;
  size_t size = 64;        // message bytes (chunked: default 1 MiB)
  int producers = 1;
  int consumers = 1;
  double rate = 0;         // messages per second in total; 0 = as fast as the window allows
  size_t window = 1000;    // messages sent but not yet delivered to everyone, at most
  int connections = 1000;  // the connections scenario
  int server_pid = 0;      // read the server's RSS (connections)
  bool json = false;
  bool progress = true;    // a line a second on stderr
};

// Runs the scenario; prints the result (a table, or one JSON object); returns the exit code.
int run_load(LoadOptions options);

}  // namespace siomq::bench
