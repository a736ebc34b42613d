// ByteStream: one client connection to a server — TCP, or TLS over it (the certificate verified against
// the given CA or the system's, with the host name; SNI sent) — with the three operations the transport
// needs: connect (resolve, TCP, TLS handshake), read some, write all. Internal to the client library;
// the WebSocket session (engine_socket.h) and each long-polling lane (http_exchange.h) own one.
//
// Threading: single-threaded, on the io_context's thread. The caller keeps it alive while an operation
// is pending (its handlers hold the owner).
#pragma once

#include <boost/asio/buffer.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/asio/write.hpp>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "transport/engine_socket.h"

namespace siomq::client {

class ByteStream {
 public:
  ByteStream(boost::asio::io_context& io, const TransportOptions& options);
  ~ByteStream();

  // Resolves, connects (TCP_NODELAY) and, for TLS, handshakes; `done` gets why it failed, or nothing.
  void connect(std::function<void(std::optional<std::string> failure)> done);

  // Reads into buffer(); done(error_code, bytes).
  template <class Done>
  void read_some(Done&& done) {
    if (tls_) tls_->async_read_some(boost::asio::buffer(buffer_), std::forward<Done>(done));
    else socket_.async_read_some(boost::asio::buffer(buffer_), std::forward<Done>(done));
  }
  template <class Done>
  void write(boost::asio::const_buffer bytes, Done&& done) {
    if (tls_) boost::asio::async_write(*tls_, bytes, std::forward<Done>(done));
    else boost::asio::async_write(socket_, bytes, std::forward<Done>(done));
  }
  char* buffer() { return buffer_.data(); }
  void close();

  boost::asio::io_context& io() { return io_; }

 private:
  boost::asio::io_context& io_;
  const TransportOptions& options_;
  boost::asio::ip::tcp::socket socket_;
  std::shared_ptr<boost::asio::ssl::context> tls_context_;
  std::unique_ptr<boost::asio::ssl::stream<boost::asio::ip::tcp::socket&>> tls_;
  std::vector<char> buffer_;
};

}  // namespace siomq::client
