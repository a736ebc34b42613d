// A Socket.IO client over Engine.IO WebSocket (v4, or v3 for Socket.IO v2 servers), on an Asio
// io_context: the transport core of the C++ client library, the CLI and the load generator. It speaks
// the same wire codecs as the server.
//
// Single-threaded: every call and callback happens on the io_context's thread.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "wire/result.h"
#include "wire/socketio.h"
#include "wire/websocket.h"

namespace siomq::client {

struct ClientOptions {
  std::string host = "127.0.0.1";
  uint16_t port = 17352;
  std::string path = "/socket.io/";
  std::string nsp = "/";
  std::string auth;  // CONNECT payload (a JSON object), empty for none
  std::chrono::milliseconds timeout{10000};  // connecting and joining the namespace
  int eio = 4;  // 3: Engine.IO v3 (Socket.IO v2 servers): the client pings, the socket id is the session id
};

// Splits "http://host:port/path" (or ws://) into the options' host, port and path; false when malformed.
bool parse_url(std::string_view url, ClientOptions& options);

class SioClient : public std::enable_shared_from_this<SioClient> {
 public:
  // An event or ack as received: the data array's raw JSON and its attachments.
  struct Incoming {
    std::string event;
    std::string json;
    std::vector<std::string> attachments;
  };
  using Handler = std::function<void(const Incoming&)>;

  SioClient(boost::asio::io_context& io, ClientOptions options);
  ~SioClient();

  // Connects, upgrades to WebSocket, opens the Engine.IO session and joins the namespace.
  void connect(std::function<void(Status)> done);
  // Sends ["event",args...]; `args` is comma-separated JSON text. With `on_ack`, asks for an ack.
  void emit(std::string_view event, std::string_view args, Handler on_ack = {});
  // Calls `handler` for every event of that name.
  void on(std::string event, Handler handler);
  // Called once when the connection ends, with the reason.
  void on_close(std::function<void(std::string_view)> handler) { on_close_ = std::move(handler); }
  void close();

  const std::string& socket_id() const { return socket_id_; }
  const std::string& engine_id() const { return engine_id_; }
  bool connected() const { return joined_ && !closed_; }

 private:
  void fail(std::string reason);
  void read();
  void on_frame_data(size_t n);
  bool on_ws_message(bool binary, std::string_view payload);
  void on_eio_text(std::string_view text);
  void on_sio_packet(sio::Packet&& packet);
  void send_text(std::string text);
  void send_frame(ws::Opcode opcode, std::string payload);
  void flush();
  void schedule_ping();  // Engine.IO v3: the client sends the heartbeat

  boost::asio::io_context& io_;
  ClientOptions options_;
  boost::asio::ip::tcp::socket socket_;
  boost::asio::steady_timer deadline_;
  boost::asio::steady_timer ping_timer_;
  std::chrono::milliseconds ping_interval_{25000};
  std::function<void(Status)> on_connected_;
  std::function<void(std::string_view)> on_close_;
  std::unordered_map<std::string, Handler> handlers_;
  std::unordered_map<uint64_t, Handler> acks_;
  uint64_t next_ack_ = 0;
  ws::Reader reader_{false, 100 * 1024 * 1024};
  sio::Decoder decoder_;
  std::string handshake_;          // the HTTP response while it is being read
  std::vector<char> read_buffer_;
  std::string out_;      // frames waiting to be written
  std::string writing_;  // frames being written
  bool upgraded_ = false;
  bool joined_ = false;
  bool closing_ = false;  // close() was called: shut down once the queue is written
  bool closed_ = false;
  std::string key_;
  std::string socket_id_;
  std::string engine_id_;
};

}  // namespace siomq::client
