#include "transport/http_exchange.h"

#include <boost/asio/buffer.hpp>
#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/host_name_verification.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/asio/write.hpp>

#include <strings.h>

#include <cstdlib>

namespace siomq::client {
namespace asio = boost::asio;
using asio::ip::tcp;

class HttpExchange::Stream {
 public:
  Stream(asio::io_context& io, const TransportOptions& o) : io(io), socket(io), buffer(65536) {
    if (o.tls) {
      ctx = client_tls_context(o.ca_file);
      tls = std::make_unique<asio::ssl::stream<tcp::socket&>>(socket, *ctx);
    }
  }
  template <class F>
  void read_some(F&& f) {
    if (tls) tls->async_read_some(asio::buffer(buffer), std::forward<F>(f));
    else socket.async_read_some(asio::buffer(buffer), std::forward<F>(f));
  }
  template <class F>
  void write(asio::const_buffer b, F&& f) {
    if (tls) asio::async_write(*tls, b, std::forward<F>(f));
    else asio::async_write(socket, b, std::forward<F>(f));
  }
  asio::io_context& io;
  tcp::socket socket;
  std::shared_ptr<asio::ssl::context> ctx;
  std::unique_ptr<asio::ssl::stream<tcp::socket&>> tls;
  std::vector<char> buffer;
};

HttpExchange::HttpExchange(asio::io_context& io, const TransportOptions& options)
    : stream_(std::make_unique<Stream>(io, options)), options_(options) {}

HttpExchange::~HttpExchange() = default;

void HttpExchange::connect_then(std::function<void()> next) {
  if (connected_) return next();
  boost::system::error_code ec;
  tcp::resolver resolver(stream_->io);
  auto endpoints = resolver.resolve(options_.host, std::to_string(options_.port), ec);
  if (ec) return finish("resolve " + options_.host + ": " + ec.message(), 0, {});
  asio::async_connect(stream_->socket, endpoints,
                      [self = shared_from_this(), next = std::move(next)](const boost::system::error_code& cec, const tcp::endpoint&) {
                        if (self->closed_) return;
                        if (cec) return self->finish("connect: " + cec.message(), 0, {});
                        boost::system::error_code opt;
                        self->stream_->socket.set_option(tcp::no_delay(true), opt);
                        if (!self->stream_->tls) {
                          self->connected_ = true;
                          return next();
                        }
                        SSL_set_tlsext_host_name(self->stream_->tls->native_handle(), self->options_.host.c_str());
                        self->stream_->tls->set_verify_callback(asio::ssl::host_name_verification(self->options_.host));
                        self->stream_->tls->async_handshake(asio::ssl::stream_base::client,
                                                            [self, next](const boost::system::error_code& hec) {
                                                              if (self->closed_) return;
                                                              if (hec) return self->finish("tls handshake: " + hec.message(), 0, {});
                                                              self->connected_ = true;
                                                              next();
                                                            });
                      });
}

void HttpExchange::request(const char* method, std::string target, std::string body, Done done) {
  done_ = std::move(done);
  std::string bytes = std::string(method) + " " + target + " HTTP/1.1\r\nHost: " + options_.host + ":" +
                      std::to_string(options_.port) + "\r\nConnection: keep-alive\r\n";
  if (std::string_view(method) == "POST")
    bytes += "Content-Type: text/plain; charset=UTF-8\r\nContent-Length: " + std::to_string(body.size()) + "\r\n";
  bytes += "\r\n";
  bytes += body;
  connect_then([self = shared_from_this(), bytes = std::move(bytes)]() mutable { self->send(std::move(bytes)); });
}

void HttpExchange::send(std::string bytes) {
  auto held = std::make_shared<std::string>(std::move(bytes));
  stream_->write(asio::buffer(*held), [self = shared_from_this(), held](const boost::system::error_code& ec, size_t) {
    if (self->closed_) return;
    if (ec) return self->finish("write: " + ec.message(), 0, {});
    self->in_.clear();
    self->read_response();
  });
}

void HttpExchange::read_response() {
  stream_->read_some([self = shared_from_this()](const boost::system::error_code& ec, size_t n) {
    if (self->closed_) return;
    if (ec) return self->finish(ec == asio::error::eof ? "connection closed by the server" : ec.message(), 0, {});
    self->in_.append(self->stream_->buffer.data(), n);
    size_t end = self->in_.find("\r\n\r\n");
    if (end == std::string::npos) {
      if (self->in_.size() > 16384) self->finish("response head too large", 0, {});
      else self->read_response();
      return;
    }
    std::string_view head(self->in_.data(), end);
    if (!head.starts_with("HTTP/1.1 ") && !head.starts_with("HTTP/1.0 ")) return self->finish("not an HTTP response", 0, {});
    int status = std::atoi(std::string(head.substr(9, 3)).c_str());
    // Content-Length, case-insensitively.
    size_t length = SIZE_MAX;
    for (size_t at = head.find("\r\n"); at != std::string_view::npos; at = head.find("\r\n", at + 2)) {
      std::string_view line = head.substr(at + 2, head.find("\r\n", at + 2) - (at + 2));
      if (line.size() > 15 && strncasecmp(line.data(), "content-length:", 15) == 0)
        length = std::strtoull(std::string(line.substr(15)).c_str(), nullptr, 10);
    }
    if (length == SIZE_MAX) return self->finish("response without Content-Length", 0, {});
    if (length > self->options_.max_message) return self->finish("response body too large", 0, {});
    if (self->in_.size() - (end + 4) < length) return self->read_response();
    std::string body = self->in_.substr(end + 4, length);
    self->in_.erase(0, end + 4 + length);
    self->finish(std::nullopt, status, std::move(body));
  });
}

void HttpExchange::finish(std::optional<std::string> failure, int status, std::string body) {
  if (failure) connected_ = false;
  if (auto done = std::move(done_)) done(std::move(failure), status, std::move(body));
}

void HttpExchange::close() {
  if (closed_) return;
  closed_ = true;
  boost::system::error_code ec;
  stream_->socket.shutdown(tcp::socket::shutdown_both, ec);
  stream_->socket.close(ec);
  done_ = nullptr;
}

}  // namespace siomq::client
