// EngineSocket: one Engine.IO session over WebSocket (v4, or v3 for Socket.IO v2 servers) carrying
// Socket.IO packets for any number of namespaces — the transport under the client library's public
// Connection and under the load generator's SioClient. Internal to the library: it exposes Asio.
//
// Threading: single-threaded. Every call and every callback happens on the io_context's thread.
// Lifetime: pending reads, writes and timers hold the socket (shared_from_this), so it lives until the
// session ends (close(), the server, an error), whoever else still holds it; `closed` is called once.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/ssl/context.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace siomq::client {

struct TransportOptions {
  std::string host = "127.0.0.1";
  uint16_t port = 17352;
  std::string path = "/socket.io/";
  std::chrono::milliseconds timeout{10000};  // TCP, TLS and the Engine.IO open together
  int eio = 4;  // 3: Engine.IO v3 (Socket.IO v2 servers): the client pings, "/" is joined by the server
  // TLS (https:// and wss:// URLs): the server's certificate is verified, with its host name (SNI too),
  // against `ca_file` (PEM) or, when empty, the system's CA certificates.
  bool tls = false;
  std::string ca_file;
  size_t max_message = 100 * 1024 * 1024;  // the largest WebSocket message accepted from the server
  // Long-polling: when the WebSocket upgrade is answered with anything but 101 (a proxy that does not
  // pass WebSocket), or from the start with polling_only.
  bool polling_fallback = true;
  bool polling_only = false;
};

// The client TLS context for a CA file (empty: the system's), shared by every connection using it.
std::shared_ptr<boost::asio::ssl::context> client_tls_context(const std::string& ca_file);

// Splits "http://host:port/path" (or ws://, https://, wss://: tls) into host, port and path; false when
// malformed. A path of "/" or none keeps the options' path.
bool parse_url(std::string_view url, TransportOptions& options);

class EngineSocket : public std::enable_shared_from_this<EngineSocket> {
 public:
  // An event or ack as received: its namespace, event name (events only), the data array's raw JSON
  // (for an event, its first element is the name) and its binary attachments.
  struct Incoming {
    std::string nsp;
    std::string event;
    std::string json;
    std::vector<std::string> attachments;
  };
  using AckHandler = std::function<void(Incoming&&)>;

  struct Callbacks {
    std::function<void()> opened;  // the Engine.IO session is open: join namespaces now
    // CONNECT answered: `failure` empty and the socket id, or the CONNECT_ERROR message.
    std::function<void(const std::string& nsp, std::optional<std::string> failure, const std::string& sid)> joined;
    std::function<void(Incoming&&)> event;
    std::function<void(const std::string& nsp)> left;  // the server sent DISCONNECT for a namespace
    std::function<void(std::string_view reason)> closed;  // once, with why
  };

  EngineSocket(boost::asio::io_context& io, TransportOptions options, Callbacks callbacks);
  ~EngineSocket();
  EngineSocket(const EngineSocket&) = delete;
  EngineSocket& operator=(const EngineSocket&) = delete;

  // Resolves, connects, upgrades to WebSocket and waits for the Engine.IO open (`opened`), all within
  // options.timeout.
  void open();
  // Sends CONNECT for `nsp` with `auth` (a JSON object, or empty); `joined` reports the answer. With
  // Engine.IO v3 the server joins "/" by itself and `auth` is not sent (v3 has no CONNECT payload).
  void join(const std::string& nsp, std::string_view auth);
  // Sends ["event",args...] on `nsp`; `args` is comma-separated JSON text referring to `attachments`
  // by {"_placeholder":true,"num":i}. With `on_ack`, asks for an ack and returns its id (else 0).
  uint64_t emit(std::string_view nsp, std::string_view event, std::string_view args,
                std::vector<std::string> attachments = {}, AckHandler on_ack = {});
  // The same with the data array already written: ["event",args...].
  uint64_t emit_data(std::string_view nsp, std::string_view data, std::vector<std::string> attachments,
                     AckHandler on_ack);
  // Forgets an ack that is no longer wanted (its request timed out); a late answer is dropped.
  void forget_ack(uint64_t id);
  // Sends DISCONNECT for every joined namespace, a WebSocket close, and ends once they are written.
  void close();

  const std::string& engine_id() const { return engine_id_; }
  bool open_done() const { return opened_ && !closed_; }
  bool closed() const { return closed_; }
  bool polling() const { return polling_; }

 private:
  void fail(std::string reason);
  void start_handshake();
  void read();
  void on_bytes(size_t n);
  bool on_ws_message(bool binary, std::string_view payload);
  void on_eio_text(std::string_view text);
  void on_attachment(std::string bytes);  // a binary message: the next attachment of a packet
  void on_open_packet(std::string_view json);
  void on_sio_packet(std::string&& nsp, int type, std::optional<uint64_t> id, std::string&& event,
                     std::string&& data, std::vector<std::string>&& attachments);
  void send_text(std::string text);
  void send_binary(std::string bytes);
  void send_frame(int opcode, std::string payload);
  void flush();
  void schedule_ping();  // Engine.IO v3: the client sends the heartbeat
  // Long-polling (transport/http_exchange.h): the handshake GET, then one GET always pending and
  // POSTs of what is queued, one at a time.
  void start_polling();
  void poll();
  void post_queued();
  void on_payload(const std::string& body);
  std::string polling_target() const;

  class Io;  // the TCP / TLS stream and the codecs, kept out of this header
  std::unique_ptr<Io> io_;
  TransportOptions options_;
  Callbacks callbacks_;
  std::chrono::milliseconds ping_interval_{25000};
  uint64_t next_ack_ = 1;
  std::string out_;      // frames waiting to be written
  std::string writing_;  // frames being written
  bool opened_ = false;
  bool upgraded_ = false;
  bool polling_ = false;
  bool closing_ = false;  // close() was called: shut down once the queue is written
  bool closed_ = false;
  bool v3_root_joined_ = false;  // v3: the server's CONNECT for "/" arrived
  bool v3_root_wanted_ = false;  // v3: join("/") was asked for
  std::string key_;
  std::string engine_id_;
  std::string handshake_;  // the HTTP response while it is being read
};

}  // namespace siomq::client
