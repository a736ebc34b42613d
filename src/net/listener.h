// Accepts TCP connections and hands each to a worker, round-robin, as an HTTP connection (with a TLS
// session from `tls` on a TLS port).
#pragma once

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <atomic>
#include <memory>
#include <string>

#include "net/http_connection.h"
#include "net/transport_options.h"

namespace siomq::net {

class WorkerPool;
class TlsContext;

class Listener {
 public:
  // `tls`: the port's TLS context (it must outlive the listener), null for plain TCP.
  Listener(WorkerPool& pool, const HttpRoutes& routes, const TransportOptions& options, const TlsContext* tls = nullptr);
  // Binds and listens; throws on failure (a start-up error).
  void listen(const std::string& host, uint16_t port);
  uint16_t port() const;
  void start();
  // Stops accepting; safe from any thread.
  void stop();

 private:
  void accept();

  WorkerPool& pool_;
  const HttpRoutes& routes_;
  const TransportOptions& options_;
  const TlsContext* tls_;
  boost::asio::ip::tcp::acceptor acceptor_;
  boost::asio::steady_timer backoff_;  // pauses accepting after an error such as EMFILE
  std::chrono::steady_clock::time_point last_refusal_log_{};  // the last "at the cap" warning
};

}  // namespace siomq::net
