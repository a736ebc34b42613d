// SioClient: one Socket.IO namespace on its own EngineSocket, with a handler per event name — the small
// callback API the load generator (tools/bench) and `siomq raw` are written against. Internal to the
// library (it exposes Asio); users have siomq/connection.h, siomq/tyomq.h and siomq/bus.h.
//
// Threading: single-threaded; every call and callback happens on the io_context's thread. A connection
// lives until it ends (close(), the server, an error), even after its SioClient is destroyed.
#pragma once

#include <boost/asio/io_context.hpp>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "transport/engine_socket.h"

namespace siomq::client {

struct ClientOptions : TransportOptions {
  std::string nsp = "/";
  std::string auth;  // CONNECT payload (a JSON object), empty for none
};

inline bool parse_url(std::string_view url, ClientOptions& options) {
  return parse_url(url, static_cast<TransportOptions&>(options));
}

class SioClient {
 public:
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
  // The same with binary attachments, referred to by {"_placeholder":true,"num":i} in `args`.
  void emit(std::string_view event, std::string_view args, std::vector<std::string> attachments, Handler on_ack = {});
  // Calls `handler` for every event of that name.
  void on(std::string event, Handler handler);
  // Called once when the connection ends, with the reason.
  void on_close(std::function<void(std::string_view)> handler);
  void close();

  const std::string& socket_id() const { return state_->socket_id; }
  const std::string& engine_id() const { return socket_->engine_id(); }
  bool connected() const { return state_->joined && !socket_->closed(); }

 private:
  // What the socket's callbacks reach; shared with them so that they outlive this object safely.
  struct State {
    std::string nsp;
    std::string auth;
    std::string socket_id;
    std::weak_ptr<EngineSocket> socket;
    bool joined = false;
    ConnectDone on_connected;
    std::function<void(std::string_view)> on_close;
    std::unordered_map<std::string, Handler> handlers;
  };
  std::shared_ptr<State> state_;
  std::shared_ptr<EngineSocket> socket_;
};

}  // namespace siomq::client
