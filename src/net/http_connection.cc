#include "net/http_connection.h"

#include <boost/asio/post.hpp>
#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/write.hpp>
#include <boost/asio/write.hpp>
#include <spdlog/spdlog.h>

#include <array>
#include <cstdio>
#include <sstream>

#include "net/http_request.h"
#include "net/socket_handoff.h"
#include "net/worker_pool.h"
#include "wire/websocket.h"

namespace siomq::net {
namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using asio::ip::tcp;

HttpResponse make_response(const HttpRequest& request, http::status status, std::string body,
                           std::string_view content_type) {
  HttpResponse res{status, request.version()};
  if (!content_type.empty()) res.set(http::field::content_type, content_type);
  res.body() = std::move(body);
  res.keep_alive(request.keep_alive());
  res.prepare_payload();
  return res;
}

HttpConnection::HttpConnection(tcp::socket socket, Worker& worker, WorkerPool& pool, const HttpRoutes& routes,
                               const TransportOptions& options, beast::flat_buffer buffer, std::unique_ptr<TlsSession> tls,
                               bool reserved)
    : counted_(reserved), stream_(std::move(socket), std::move(tls)), buffer_(std::move(buffer)), worker_(worker), pool_(pool), routes_(routes),
      options_(options) {
  boost::system::error_code ec;
  auto ep = stream_.socket().remote_endpoint(ec);
  if (!ec) remote_address_ = ep.address().to_string();
  stream_.socket().set_option(tcp::no_delay(true), ec);
  // Never block a worker: the one synchronous call on this socket (the peek in watch_for_close) must
  // return at once.
  stream_.socket().non_blocking(true, ec);
}

void HttpConnection::start() {
  if (!stream_.is_tls()) return read_request();
  // The handshake is hostile input like a request: it must finish within the request's time, and the
  // connection counts against the caps from the accept on.
  stream_.expires_after(options_.http_request_timeout);
  stream_.async_handshake([self = shared_from_this()](const boost::system::error_code& ec, size_t) {
    if (ec) {
      spdlog::debug("tls {}: handshake failed: {} {}", self->remote_address_, ec.message(), self->stream_.tls_error());
      // OpenSSL recognises an HTTP request where a ClientHello should be: say so in plain HTTP, once,
      // without waiting (the socket is non-blocking; a client that does not read just misses it).
      if (self->stream_.tls_error().find("http request") != std::string::npos) {
        static constexpr std::string_view kPlainToTls =
            "HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain\r\nContent-Length: 44\r\nConnection: close\r\n\r\n"
            "This port speaks TLS: use https:// or wss://";
        boost::system::error_code wec;
        self->stream_.socket().write_some(asio::buffer(kPlainToTls), wec);
      }
      self->close();
      return;
    }
    self->read_request();
  });
}

void HttpConnection::read_request() {
  parser_.emplace();
  parser_->header_limit(static_cast<std::uint32_t>(options_.max_http_header));
  parser_->body_limit(options_.max_payload);
  // Covers the idle time before a request and the whole request: a client that trickles bytes
  // (slowloris) is cut off when it runs out.
  stream_.expires_after(options_.http_request_timeout);
  http::async_read(stream_, buffer_, *parser_,
                   [self = shared_from_this()](const boost::system::error_code& ec, size_t) { self->on_read(ec); });
}

void HttpConnection::on_read(const boost::system::error_code& ec) {
  if (ec == http::error::body_limit) {
    std::string target(parser_->get().target());
    keep_alive_ = false;
    unread_body_ = true;
    std::string body;
    for (const auto& f : routes_.payload_too_large_body) {
      if (body.empty()) body = f(target);
    }
    std::string_view type = body.empty() ? std::string_view{} : "application/json; charset=utf-8";
    auto res = make_response(parser_->get(), http::status::payload_too_large, std::move(body), type);
    res.keep_alive(false);
    respond(std::move(res));
    if (routes_.on_payload_too_large) routes_.on_payload_too_large(target);
    return;
  }
  if (ec) {
    if (ec != http::error::end_of_stream && ec != beast::error::timeout && ec != asio::error::operation_aborted &&
        ec != asio::error::connection_reset && ec != asio::error::eof)
      spdlog::debug("http {}: {}", remote_address_, ec.message());
    close();
    return;
  }
  stream_.expires_never();
  HttpRequest request = parser_->release();
  parser_.reset();
  dispatch(request);
}

void HttpConnection::serve(HttpRequest request) { dispatch(request); }

void HttpConnection::dispatch(HttpRequest& request) {
  keep_alive_ = request.keep_alive();
  auto self = shared_from_this();
  for (const auto& handler : routes_.handlers) {
    if (handler(self, request)) return;
  }
  respond(make_response(request, http::status::forbidden));
}

void HttpConnection::respond(HttpResponse response) {
  ++watch_;
  if (!response.keep_alive()) keep_alive_ = false;
  auto res = std::make_shared<HttpResponse>(std::move(response));
  stream_.expires_after(options_.http_request_timeout);
  http::async_write(stream_, *res, [self = shared_from_this(), res](const boost::system::error_code& ec, size_t) {
    if (ec || !self->keep_alive_) {
      if (!ec && self->unread_body_) return self->linger_close();
      self->close();
      return;
    }
    self->read_request();
  });
}

// Closing a socket with unread input makes the kernel send a reset, and a client still writing the
// body we refused gets EPIPE or ECONNRESET instead of our 413. So stop sending, read and drop what
// it still sends until it closes, for at most 2 s and 16 MiB, then close (nginx's
// lingering close).
void HttpConnection::linger_close() {
  boost::system::error_code ec;
  if (!stream_.is_tls()) stream_.socket().shutdown(tcp::socket::shutdown_send, ec);
  stream_.expires_after(std::chrono::seconds(2));
  linger_scratch_ = std::make_unique<std::array<char, 4096>>();
  linger_read(0);
}

void HttpConnection::linger_read(size_t dropped) {
  static constexpr size_t kLingerBytes = 16 * 1024 * 1024;
  stream_.async_read_some(asio::buffer(*linger_scratch_),
                          [self = shared_from_this(), dropped](const boost::system::error_code& ec, size_t n) {
                            if (ec || dropped + n >= kLingerBytes) return self->close();
                            self->linger_read(dropped + n);
                          });
}

void HttpConnection::watch_for_close(std::function<void()> on_close) {
  if (stream_.is_tls()) return watch_tls_for_close(std::move(on_close));
  stream_.socket().async_wait(tcp::socket::wait_read, [self = shared_from_this(), on_close = std::move(on_close)](
                                                          const boost::system::error_code& ec) {
    if (ec == asio::error::operation_aborted) return;
    // Readable means the peer closed (EOF or error) or sent bytes of a next request; only the first counts.
    // The socket is non-blocking: a read that already took the bytes leaves nothing to peek (would_block).
    char c;
    boost::system::error_code peek_ec;
    size_t n = self->stream_.socket().receive(asio::buffer(&c, 1), tcp::socket::message_peek, peek_ec);
    if (peek_ec == asio::error::would_block || peek_ec == asio::error::try_again) return;
    if (ec || peek_ec || n == 0) on_close();
  });
}

// Over TLS the encrypted bytes cannot be peeked at: what arrives is read (without waiting) into the
// buffer the next request is parsed from. A response ends the watch before anything else reads.
void HttpConnection::watch_tls_for_close(std::function<void()> on_close) {
  unsigned id = ++watch_;
  stream_.socket().async_wait(tcp::socket::wait_read, [self = shared_from_this(), id, on_close = std::move(on_close)](
                                                          const boost::system::error_code& ec) mutable {
    if (ec == asio::error::operation_aborted || id != self->watch_) return;
    if (ec) return on_close();
    TlsResult r = self->stream_.read_now(self->buffer_.prepare(4096));
    if (r.closed) return on_close();
    if (r.bytes > 0) return self->buffer_.commit(r.bytes);  // a next request's bytes: only the first read counts
    if (r.wait == TlsResult::Wait::kRead) self->watch_tls_for_close(std::move(on_close));
  });
}

void HttpConnection::migrate(Worker& target, HttpRequest request) {
  ++watch_;
  std::unique_ptr<TlsSession> tls = stream_.release_tls();
  tcp::socket socket = stream_.release_socket();
  auto handoff = hand_off(socket);
  if (!handoff) return;
  asio::post(target.io(), [handoff = *handoff, &target, &pool = pool_, &routes = routes_, &options = options_,
                           buffer = std::move(buffer_), request = std::move(request), tls = std::move(tls)]() mutable {
    tcp::socket moved(target.io());
    if (!take(moved, handoff)) return;
    // The TLS session moves as it is: it reads and writes the same descriptor on the new worker.
    auto conn = std::make_shared<HttpConnection>(std::move(moved), target, pool, routes, options, std::move(buffer),
                                                 std::move(tls));
    conn->serve(std::move(request));
  });
}

void HttpConnection::accept_websocket(const HttpRequest& request, WebSocketOpen on_open) {
  ++watch_;
  auto problem = websocket_upgrade_problem(
      std::string_view(request.method_string()), request[http::field::upgrade], request[http::field::connection],
      request[http::field::sec_websocket_version], request[http::field::sec_websocket_key]);
  if (problem) {
    auto res = make_response(request, http::status::bad_request, *problem, "text/plain");
    res.keep_alive(false);
    respond(std::move(res));
    return;
  }
  auto res = std::make_shared<http::response<http::empty_body>>(http::status::switching_protocols, request.version());
  res->set(http::field::upgrade, "websocket");
  res->set(http::field::connection, "Upgrade");
  res->set(http::field::sec_websocket_accept, ws::accept_key(request[http::field::sec_websocket_key]));
  stream_.expires_after(options_.http_request_timeout);
  http::async_write(stream_, *res,
                    [self = shared_from_this(), res, on_open = std::move(on_open)](const boost::system::error_code& ec,
                                                                                   size_t) {
                      if (ec) {
                        self->close();
                        return;
                      }
                      self->stream_.expires_never();
                      std::string leftover(static_cast<const char*>(self->buffer_.data().data()),
                                           self->buffer_.size());
                      self->buffer_.consume(self->buffer_.size());
                      auto tls = self->stream_.release_tls();
                      on_open(self->stream_.release_socket(), std::move(tls), std::move(leftover));
                    });
}

void HttpConnection::stream_open(HttpResponse head, size_t max_pending, std::function<void()> on_close) {
  streaming_ = std::make_unique<Streaming>();
  streaming_->max_pending = max_pending;
  streaming_->on_close = std::move(on_close);
  head.body().clear();
  head.erase(http::field::content_length);
  head.set(http::field::transfer_encoding, "chunked");
  std::ostringstream text;
  text << head.base();
  streaming_->pending = text.str();
  stream_.expires_never();
  stream_flush();
  stream_watch();
}

bool HttpConnection::stream_write(std::string_view data) {
  if (!streaming_ || streaming_->ended || data.empty()) return streaming_ && !streaming_->ended;
  Streaming& s = *streaming_;
  char size[24];
  int n = std::snprintf(size, sizeof size, "%zx\r\n", data.size());
  s.pending.append(size, static_cast<size_t>(n));
  s.pending.append(data);
  s.pending.append("\r\n");
  if (s.pending.size() + s.writing.size() > s.max_pending) {
    spdlog::debug("http {}: stream reader too slow ({} bytes pending): closed", remote_address_, s.pending.size());
    stream_close();
    return false;
  }
  stream_flush();
  return true;
}

void HttpConnection::stream_close() {
  if (!streaming_ || streaming_->ended) return;
  close();
  stream_ended();
}

void HttpConnection::stream_ended() {
  if (!streaming_ || streaming_->ended) return;
  streaming_->ended = true;
  streaming_->pending.clear();
  if (auto f = std::move(streaming_->on_close)) f();
}

// One write at a time; what queued meanwhile goes in the next.
void HttpConnection::stream_flush() {
  Streaming& s = *streaming_;
  if (s.ended || !s.writing.empty() || s.pending.empty()) return;
  s.writing.swap(s.pending);
  asio::async_write(stream_, asio::buffer(s.writing), [self = shared_from_this()](const boost::system::error_code& ec, size_t) {
    Streaming& st = *self->streaming_;
    st.writing.clear();
    if (ec) return self->stream_close();
    self->stream_flush();
  });
}

// The client sends nothing on an event stream: a read that ends is the client gone.
void HttpConnection::stream_watch() {
  stream_.async_read_some(asio::buffer(streaming_->discard),
                          [self = shared_from_this()](const boost::system::error_code& ec, size_t) {
                            if (ec) return self->stream_close();
                            if (!self->streaming_->ended) self->stream_watch();
                          });
}

void HttpConnection::close() { stream_.close(); }

}  // namespace siomq::net
