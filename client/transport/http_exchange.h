// HttpExchange: one keep-alive HTTP/1.1 connection (TCP, or TLS verified as EngineSocket's) doing one
// request at a time — the two lanes of Engine.IO long-polling (a pending GET, and POSTs) when the
// WebSocket upgrade is refused. Internal to the client library.
//
// Responses must carry Content-Length (what Engine.IO servers send) and fit in `max_body` bytes.
// Threading: single-threaded, on the io_context's thread. Lifetime: pending operations hold it.
#pragma once

#include <boost/asio/io_context.hpp>

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "transport/engine_socket.h"

namespace siomq::client {

class ByteStream;

class HttpExchange : public std::enable_shared_from_this<HttpExchange> {
 public:
  // failure empty: the status code and the body.
  using Done = std::function<void(std::optional<std::string> failure, int status, std::string body)>;

  HttpExchange(boost::asio::io_context& io, const TransportOptions& options);
  ~HttpExchange();

  // Sends `method` `target` with `body` (as text/plain; charset=UTF-8), connecting first if needed.
  void request(const char* method, std::string target, std::string body, Done done);
  void close();

 private:
  void connect_then(std::function<void()> next);
  void send(std::string bytes);
  void read_response();
  void finish(std::optional<std::string> failure, int status, std::string body);

  std::unique_ptr<ByteStream> stream_;
  const TransportOptions& options_;
  Done done_;
  std::string in_;
  bool connected_ = false;
  bool closed_ = false;
};

}  // namespace siomq::client
