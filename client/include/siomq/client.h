// siomq's C++ client library: a Socket.IO client over Engine.IO WebSocket (v4, or v3 for Socket.IO v2
// servers) on an Asio io_context, used by the `siomq` CLI and its load generator. This header is the
// library's whole public surface; the wire codecs it shares with the server stay inside the library.
//
// Single-threaded: every call and callback happens on the io_context's thread. A connection lives until
// it ends (close(), the server, or an error), even after its SioClient is destroyed; callbacks may keep
// running until then.
#pragma once

#include <boost/asio/io_context.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace siomq::client {

struct ClientOptions {
  std::string host = "127.0.0.1";
  uint16_t port = 17352;
  std::string path = "/socket.io/";
  std::string nsp = "/";
  std::string auth;  // CONNECT payload (a JSON object), empty for none
  std::chrono::milliseconds timeout{10000};  // connecting and joining the namespace
  int eio = 4;  // 3: Engine.IO v3 (Socket.IO v2 servers): the client pings, the socket id is the session id
  // TLS (https:// and wss:// URLs): the server's certificate is verified, with its host name, against
  // `ca_file` (PEM) or, when empty, the system's CA certificates.
  bool tls = false;
  std::string ca_file;
};

// Splits "http://host:port/path" (or ws://, https://, wss://: tls) into the options' host, port and
// path; false when malformed.
bool parse_url(std::string_view url, ClientOptions& options);

class SioClient {
 public:
  // An event or ack as received: the data array's raw JSON and its attachments.
  struct Incoming {
    std::string event;
    std::string json;
    std::vector<std::string> attachments;
  };
  using Handler = std::function<void(const Incoming&)>;
  // nullopt once the namespace is joined; else why connecting failed.
  using ConnectDone = std::function<void(std::optional<std::string> failure)>;

  SioClient(boost::asio::io_context& io, ClientOptions options);
  ~SioClient();
  SioClient(const SioClient&) = delete;
  SioClient& operator=(const SioClient&) = delete;

  // Connects, upgrades to WebSocket, opens the Engine.IO session and joins the namespace.
  void connect(ConnectDone done);
  // Sends ["event",args...]; `args` is comma-separated JSON text. With `on_ack`, asks for an ack.
  void emit(std::string_view event, std::string_view args, Handler on_ack = {});
  // The same with binary attachments: `args` refers to them by {"_placeholder":true,"num":i}; they go as
  // binary frames after the event (a Socket.IO BINARY_EVENT).
  void emit(std::string_view event, std::string_view args, std::vector<std::string> attachments, Handler on_ack = {});
  // Calls `handler` for every event of that name.
  void on(std::string event, Handler handler);
  // Called once when the connection ends, with the reason.
  void on_close(std::function<void(std::string_view)> handler);
  void close();

  const std::string& socket_id() const;
  const std::string& engine_id() const;
  bool connected() const;

 private:
  class Connection;  // the protocol state, shared with the pending I/O that keeps it alive
  std::shared_ptr<Connection> connection_;
};

}  // namespace siomq::client
