// siomq: the command-line client. So far `siomq ping`, a tyo-mq PING round trip over our C++ client.
#include <CLI/CLI.hpp>
#include <boost/asio/io_context.hpp>

#include <chrono>
#include <cstdio>
#include <iostream>

#include "client/sio_client.h"

namespace {

using namespace siomq;

int ping(const std::string& url, int count, const std::string& payload) {
  client::ClientOptions options;
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
  c->connect([&](Status st) {
    if (!st) return;  // reported by on_close
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
  int count = 1;
  std::string payload = "{}";
  auto* ping_cmd = app.add_subcommand("ping", "PING the server (tyo-mq) and print each reply and its round trip");
  ping_cmd->add_option("--url", url, "Server URL")->capture_default_str();
  ping_cmd->add_option("-n,--count", count, "Number of PINGs, one after another")->capture_default_str()->check(CLI::PositiveNumber);
  ping_cmd->add_option("--payload", payload, "PING payload (JSON)")->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  if (*ping_cmd) return ping(url, count, payload);
  return 0;
}
