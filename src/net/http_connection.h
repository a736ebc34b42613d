// One HTTP/1.1 connection: reads requests with Beast, hands each to the routes, writes the response.
//
// A request for an Engine.IO session that lives on another worker moves the whole TCP connection to
// that worker first, so session state is only ever touched by its own thread. On a TLS port the
// connection's TLS state moves with it (net/http_stream.h), and the handshake comes first.
#pragma once

#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>
#include <array>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "net/connection_count.h"
#include "net/http_stream.h"
#include "net/transport_options.h"

namespace siomq::net {

class Worker;
class WorkerPool;
class HttpConnection;

using HttpRequest = boost::beast::http::request<boost::beast::http::string_body>;
using HttpResponse = boost::beast::http::response<boost::beast::http::string_body>;

// Who answers what. A handler returns true when it claimed the request (and will respond);
// unclaimed requests get 403 with an empty body.
struct HttpRoutes {
  std::vector<std::function<bool(const std::shared_ptr<HttpConnection>&, HttpRequest&)>> handlers;
  // Called with the target of a request whose body exceeded the limit (it has been answered 413).
  std::function<void(std::string_view target)> on_payload_too_large;
  // The JSON body of that 413 for `target`, "" for none (HTTP publish answers {ok:false, code:413, ...}).
  std::vector<std::function<std::string(std::string_view target)>> payload_too_large_body;
};

class HttpConnection : public std::enable_shared_from_this<HttpConnection> {
 public:
  // `tls`: the connection's TLS state on a TLS port, null for plain TCP. `reserved`: its connection count
  // was taken by ConnectionCount::reserve() (the listener's, at accept), and the connection adopts it.
  HttpConnection(boost::asio::ip::tcp::socket socket, Worker& worker, WorkerPool& pool, const HttpRoutes& routes,
                 const TransportOptions& options, boost::beast::flat_buffer buffer = {},
                 std::unique_ptr<TlsSession> tls = nullptr, bool reserved = false);

  // Starts reading the first request (after the TLS handshake, on a TLS port; it must finish within
  // http_request_timeout).
  void start();
  // Serves a request that was read on another worker before the connection moved here.
  void serve(HttpRequest request);

  Worker& worker() { return worker_; }
  bool is_tls() const { return stream_.is_tls(); }
  const std::string& remote_address() const { return remote_address_; }

  // Sends the response, then reads the next request or closes, as keep-alive says.
  void respond(HttpResponse response);
  // Calls `on_close` if the client closes the connection while a response is outstanding (a pending
  // long-poll GET); bytes the client sends meanwhile are left for the next read.
  void watch_for_close(std::function<void()> on_close);
  // Moves this connection to `target` and serves `request` there.
  void migrate(Worker& target, HttpRequest request);
  // Answers 101 and hands the socket, its TLS state (null for plain TCP) and any bytes read past the
  // request to `on_open`.
  using WebSocketOpen =
      std::function<void(boost::asio::ip::tcp::socket, std::unique_ptr<TlsSession>, std::string)>;
  void accept_websocket(const HttpRequest& request, WebSocketOpen on_open);

  // A streaming response (Server-Sent Events), on the worker only: sends `head` (its body ignored) with
  // chunked transfer coding, then each stream_write() as one chunk, in order. When more than
  // `max_pending` bytes wait to be written the reader is too slow: the connection is closed. `on_close`
  // runs once, on the worker, when the connection ends (either side); bytes the client sends meanwhile
  // are read and dropped.
  void stream_open(HttpResponse head, size_t max_pending, std::function<void()> on_close);
  // Queues one chunk; false (and nothing queued) once the stream is closed.
  bool stream_write(std::string_view data);
  // Ends the stream and the connection.
  void stream_close();

 private:
  void stream_flush();
  void stream_watch();
  void stream_ended();
  void read_request();
  void on_read(const boost::system::error_code& ec);
  void dispatch(HttpRequest& request);
  void close();
  void linger_close();
  void linger_read(size_t dropped);
  void watch_tls_for_close(std::function<void()> on_close);

  [[no_unique_address]] ConnectionCount counted_;
  HttpStream stream_;
  boost::beast::flat_buffer buffer_;
  std::optional<boost::beast::http::request_parser<boost::beast::http::string_body>> parser_;
  Worker& worker_;
  WorkerPool& pool_;
  const HttpRoutes& routes_;
  const TransportOptions& options_;
  std::string remote_address_;
  bool keep_alive_ = true;
  bool unread_body_ = false;  // answered before the request's body was read (413): linger_close, not close
  std::unique_ptr<std::array<char, 4096>> linger_scratch_;
  unsigned watch_ = 0;  // TLS: the current close watch; a response ends it (its reads would race the next request's)
  // The streaming response's state (stream_open): bytes waiting, bytes being written, the bound.
  struct Streaming {
    std::string pending, writing;
    size_t max_pending = 0;
    std::function<void()> on_close;
    char discard[512];
    bool ended = false;
  };
  std::unique_ptr<Streaming> streaming_;
};

// Builds a response with the status, content type and body given, and Content-Length set.
HttpResponse make_response(const HttpRequest& request, boost::beast::http::status status, std::string body = {},
                           std::string_view content_type = {});

}  // namespace siomq::net
