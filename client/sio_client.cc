#include "siomq/client.h"

#include <boost/asio/buffer.hpp>
#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/host_name_verification.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>
#include <simdjson.h>

#include <cstring>
#include <map>
#include <mutex>
#include <random>
#include <unordered_map>

#include "wire/base64.h"
#include "wire/engineio.h"
#include "wire/result.h"
#include "wire/socketio.h"
#include "wire/websocket.h"

namespace siomq::client {
namespace asio = boost::asio;
using asio::ip::tcp;

namespace {

// The string field `name` of a JSON object text, or empty.
std::string string_field(std::string_view json, const char* name) {
  simdjson::dom::parser parser;
  auto doc = parser.parse(json.data(), json.size());
  if (doc.error()) return {};
  auto v = doc.value_unsafe()[name];
  if (v.error() || !v.value_unsafe().is_string()) return {};
  return std::string(v.value_unsafe().get_string().value_unsafe());
}

// One client TLS context per CA file, shared by the connections that use it (loading CAs is not cheap).
std::shared_ptr<asio::ssl::context> tls_context(const std::string& ca_file) {
  static std::mutex mu;
  static std::map<std::string, std::shared_ptr<asio::ssl::context>> contexts;
  std::lock_guard lock(mu);
  auto& ctx = contexts[ca_file];
  if (!ctx) {
    ctx = std::make_shared<asio::ssl::context>(asio::ssl::context::tls_client);
    ctx->set_options(asio::ssl::context::default_workarounds | asio::ssl::context::no_tlsv1 |
                     asio::ssl::context::no_tlsv1_1);
    boost::system::error_code ec;
    if (ca_file.empty()) ctx->set_default_verify_paths(ec);
    else ctx->load_verify_file(ca_file, ec);
    ctx->set_verify_mode(asio::ssl::verify_peer);
  }
  return ctx;
}

std::mt19937& rng() {
  thread_local std::mt19937 gen{std::random_device{}()};
  return gen;
}

}  // namespace

bool parse_url(std::string_view url, ClientOptions& o) {
  for (std::string_view scheme : {"http://", "ws://", "https://", "wss://"}) {
    if (!url.starts_with(scheme)) continue;
    url.remove_prefix(scheme.size());
    o.tls = scheme.starts_with("https") || scheme.starts_with("wss");
    break;
  }
  size_t slash = url.find('/');
  std::string_view authority = url.substr(0, slash);
  if (slash != std::string_view::npos && url.size() > slash + 1) o.path = std::string(url.substr(slash));
  size_t colon = authority.rfind(':');
  if (authority.empty()) return false;
  if (colon == std::string_view::npos) {
    o.host = std::string(authority);
    if (o.tls) o.port = 443;
    return true;
  }
  o.host = std::string(authority.substr(0, colon));
  int port = 0;
  for (char c : authority.substr(colon + 1)) {
    if (c < '0' || c > '9') return false;
    port = port * 10 + (c - '0');
    if (port > 65535) return false;
  }
  o.port = static_cast<uint16_t>(port);
  return !o.host.empty() && port > 0;
}

// The client's protocol state. Pending reads, writes and timers hold it (shared_from_this), so it
// lives until the connection ends whatever happens to the SioClient that made it.
class SioClient::Connection : public std::enable_shared_from_this<SioClient::Connection> {
 public:
  Connection(asio::io_context& io, ClientOptions options);

  void connect(ConnectDone done);
  void emit(std::string_view event, std::string_view args, std::vector<std::string> attachments, Handler on_ack);
  void on(std::string event, Handler handler);
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
  void send_upgrade_request();
  // Reads and writes through TLS when the URL asked for it.
  template <class Done>
  void read_some(Done&& done);
  template <class Done>
  void write_all(asio::const_buffer bytes, Done&& done);

  asio::io_context& io_;
  ClientOptions options_;
  tcp::socket socket_;
  std::shared_ptr<asio::ssl::context> tls_context_;
  std::unique_ptr<asio::ssl::stream<tcp::socket&>> tls_;
  asio::steady_timer deadline_;
  asio::steady_timer ping_timer_;
  std::chrono::milliseconds ping_interval_{25000};
  ConnectDone on_connected_;
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

SioClient::SioClient(asio::io_context& io, ClientOptions options)
    : connection_(std::make_shared<Connection>(io, std::move(options))) {}
SioClient::~SioClient() = default;
void SioClient::connect(ConnectDone done) { connection_->connect(std::move(done)); }
void SioClient::emit(std::string_view event, std::string_view args, Handler on_ack) {
  connection_->emit(event, args, {}, std::move(on_ack));
}

void SioClient::emit(std::string_view event, std::string_view args, std::vector<std::string> attachments,
                     Handler on_ack) {
  connection_->emit(event, args, std::move(attachments), std::move(on_ack));
}
void SioClient::on(std::string event, Handler handler) { connection_->on(std::move(event), std::move(handler)); }
void SioClient::on_close(std::function<void(std::string_view)> handler) { connection_->on_close(std::move(handler)); }
void SioClient::close() { connection_->close(); }
const std::string& SioClient::socket_id() const { return connection_->socket_id(); }
const std::string& SioClient::engine_id() const { return connection_->engine_id(); }
bool SioClient::connected() const { return connection_->connected(); }

SioClient::Connection::Connection(asio::io_context& io, ClientOptions options)
    : io_(io), options_(std::move(options)), socket_(io), deadline_(io), ping_timer_(io), read_buffer_(65536) {
  if (options_.path.empty() || options_.path.back() != '/') options_.path.push_back('/');
  if (options_.tls) {
    tls_context_ = tls_context(options_.ca_file);
    tls_ = std::make_unique<asio::ssl::stream<tcp::socket&>>(socket_, *tls_context_);
  }
}

template <class Done>
void SioClient::Connection::read_some(Done&& done) {
  if (tls_) tls_->async_read_some(asio::buffer(read_buffer_), std::forward<Done>(done));
  else socket_.async_read_some(asio::buffer(read_buffer_), std::forward<Done>(done));
}

template <class Done>
void SioClient::Connection::write_all(asio::const_buffer bytes, Done&& done) {
  if (tls_) asio::async_write(*tls_, bytes, std::forward<Done>(done));
  else asio::async_write(socket_, bytes, std::forward<Done>(done));
}

void SioClient::Connection::connect(ConnectDone done) {
  on_connected_ = std::move(done);
  deadline_.expires_after(options_.timeout);
  deadline_.async_wait([weak = weak_from_this()](const boost::system::error_code& ec) {
    if (auto self = weak.lock(); self && !ec && !self->joined_) self->fail("timed out connecting");
  });
  boost::system::error_code ec;
  tcp::resolver resolver(io_);
  auto endpoints = resolver.resolve(options_.host, std::to_string(options_.port), ec);
  if (ec) return fail("resolve: " + ec.message());
  asio::async_connect(socket_, endpoints, [self = shared_from_this()](const boost::system::error_code& cec,
                                                                      const tcp::endpoint&) {
    if (cec) return self->fail("connect: " + cec.message());
    boost::system::error_code opt_ec;
    self->socket_.set_option(tcp::no_delay(true), opt_ec);
    if (!self->tls_) return self->send_upgrade_request();
    SSL_set_tlsext_host_name(self->tls_->native_handle(), self->options_.host.c_str());  // SNI
    self->tls_->set_verify_callback(asio::ssl::host_name_verification(self->options_.host));
    self->tls_->async_handshake(asio::ssl::stream_base::client, [self](const boost::system::error_code& hec) {
      if (hec) return self->fail("tls handshake: " + hec.message());
      self->send_upgrade_request();
    });
  });
}

void SioClient::Connection::send_upgrade_request() {
  unsigned char nonce[16];
  for (auto& b : nonce) b = static_cast<unsigned char>(rng()());
  key_ = base64::encode(std::string_view(reinterpret_cast<const char*>(nonce), sizeof nonce));
  auto request = std::make_shared<std::string>(
      "GET " + options_.path + "?EIO=" + std::to_string(options_.eio) + "&transport=websocket HTTP/1.1\r\nHost: " +
      options_.host + ":" + std::to_string(options_.port) +
      "\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: " + key_ +
      "\r\n\r\n");
  write_all(asio::buffer(*request), [self = shared_from_this(), request](const boost::system::error_code& wec, size_t) {
    if (wec) return self->fail("write: " + wec.message());
    self->read();
  });
}

void SioClient::Connection::read() {
  read_some([self = shared_from_this()](const boost::system::error_code& ec, size_t n) {
    if (ec) return self->fail(ec == asio::error::eof ? "connection closed" : ec.message());
    self->on_frame_data(n);
    if (!self->closed_) self->read();
  });
}

void SioClient::Connection::on_frame_data(size_t n) {
  char* data = read_buffer_.data();
  if (!upgraded_) {
    handshake_.append(data, n);
    size_t end = handshake_.find("\r\n\r\n");
    if (end == std::string::npos) {
      if (handshake_.size() > 16384) fail("handshake response too large");
      return;
    }
    std::string head = handshake_.substr(0, end);
    if (!head.starts_with("HTTP/1.1 101")) return fail("upgrade refused: " + head.substr(0, head.find('\r')));
    if (head.find(ws::accept_key(key_)) == std::string::npos) return fail("bad Sec-WebSocket-Accept");
    upgraded_ = true;
    std::string rest = handshake_.substr(end + 4);
    handshake_.clear();
    if (rest.empty()) return;
    auto st = reader_.feed(rest.data(), rest.size(), [this](const ws::Event& ev) {
      return ev.kind == ws::Event::kMessage ? on_ws_message(ev.binary, ev.payload) : ev.kind != ws::Event::kClose;
    });
    if (!st) fail("websocket: " + st.error().message);
    return;
  }
  auto st = reader_.feed(data, n, [this](const ws::Event& ev) {
    if (ev.kind == ws::Event::kPing) {
      send_frame(ws::Opcode::kPong, std::string(ev.payload));
      return true;
    }
    if (ev.kind == ws::Event::kClose) {
      fail("server closed the WebSocket");
      return false;
    }
    return ev.kind == ws::Event::kMessage ? on_ws_message(ev.binary, ev.payload) : true;
  });
  if (!st) fail("websocket: " + st.error().message);
}

bool SioClient::Connection::on_ws_message(bool binary, std::string_view payload) {
  if (binary && options_.eio == 3) {
    // Engine.IO v3 prefixes a binary message with its packet type (4).
    if (payload.empty() || payload[0] != 4) return !closed_;
    payload.remove_prefix(1);
  }
  if (binary) {
    auto r = decoder_.feed_binary(std::string(payload));
    if (!r) {
      fail("bad attachment: " + r.error().message);
      return false;
    }
    if (r->has_value()) on_sio_packet(std::move(**r));
  } else {
    on_eio_text(payload);
  }
  return !closed_;
}

void SioClient::Connection::on_eio_text(std::string_view text) {
  auto packet = eio::decode_text(text);
  if (!packet) return fail("bad Engine.IO packet");
  switch (packet->type) {
    case eio::PacketType::kOpen: {
      engine_id_ = string_field(packet->data, "sid");
      if (options_.eio == 3) {
        // v3: the server joins "/" by itself; the client keeps the session alive with pings.
        simdjson::dom::parser parser;
        auto doc = parser.parse(packet->data.data(), packet->data.size());
        if (!doc.error()) {
          auto interval = doc.value_unsafe()["pingInterval"].get_int64();
          if (!interval.error() && interval.value_unsafe() > 0) ping_interval_ = std::chrono::milliseconds(interval.value_unsafe());
        }
        schedule_ping();
        if (options_.nsp == "/") break;
      }
      std::string connect = "4";
      sio::append_text(connect, sio::PacketType::kConnect, options_.nsp, std::nullopt, options_.auth);
      send_text(std::move(connect));
      break;
    }
    case eio::PacketType::kPing:
      send_text("3" + packet->data);
      break;
    case eio::PacketType::kClose:
      fail("server closed the session");
      break;
    case eio::PacketType::kMessage: {
      auto r = decoder_.feed_text(packet->data);
      if (!r) return fail("bad Socket.IO packet: " + r.error().message);
      if (r->has_value()) on_sio_packet(std::move(**r));
      break;
    }
    default:
      break;
  }
}

void SioClient::Connection::on_sio_packet(sio::Packet&& p) {
  switch (p.type) {
    case sio::PacketType::kConnect:
      if (p.nsp != options_.nsp) break;
      // v3: the socket id is the session id ("/nsp#sid" elsewhere than "/").
      socket_id_ = options_.eio == 3 ? (options_.nsp == "/" ? engine_id_ : options_.nsp + "#" + engine_id_)
                                     : string_field(p.data, "sid");
      joined_ = true;
      deadline_.cancel();
      if (auto done = std::move(on_connected_)) done(std::nullopt);
      break;
    case sio::PacketType::kConnectError: {
      std::string message = string_field(p.data, "message");
      fail("connect refused: " + (message.empty() ? p.data : message));
      break;
    }
    case sio::PacketType::kDisconnect:
      fail("server namespace disconnect");
      break;
    case sio::PacketType::kEvent:
    case sio::PacketType::kBinaryEvent: {
      auto it = handlers_.find(p.event);
      if (it != handlers_.end()) it->second(Incoming{p.event, std::move(p.data), std::move(p.attachments)});
      break;
    }
    case sio::PacketType::kAck:
    case sio::PacketType::kBinaryAck: {
      if (!p.id) break;
      auto it = acks_.find(*p.id);
      if (it == acks_.end()) break;
      Handler handler = std::move(it->second);
      acks_.erase(it);
      handler(Incoming{{}, std::move(p.data), std::move(p.attachments)});
      break;
    }
  }
}

void SioClient::Connection::emit(std::string_view event, std::string_view args, std::vector<std::string> attachments,
                                  Handler on_ack) {
  std::string data = "[";
  sio::append_json_string(data, event);
  if (!args.empty()) {
    data.push_back(',');
    data.append(args);
  }
  data.push_back(']');
  std::optional<uint64_t> id;
  if (on_ack) {
    id = next_ack_++;
    acks_.emplace(*id, std::move(on_ack));
  }
  std::string text = "4";
  sio::append_text(text, attachments.empty() ? sio::PacketType::kEvent : sio::PacketType::kBinaryEvent, options_.nsp, id,
                   data, attachments.size());
  send_text(std::move(text));
  for (auto& a : attachments) {
    // Engine.IO v3 prefixes a binary message with its packet type (4, message).
    if (options_.eio == 3) a.insert(a.begin(), '\x04');
    send_frame(ws::Opcode::kBinary, std::move(a));
  }
}

void SioClient::Connection::schedule_ping() {
  ping_timer_.expires_after(ping_interval_);
  ping_timer_.async_wait([weak = weak_from_this()](const boost::system::error_code& ec) {
    auto self = weak.lock();
    if (!self || ec || self->closed_) return;
    self->send_text("2");
    self->schedule_ping();
  });
}

void SioClient::Connection::on(std::string event, Handler handler) { handlers_[std::move(event)] = std::move(handler); }

void SioClient::Connection::send_text(std::string text) { send_frame(ws::Opcode::kText, std::move(text)); }

void SioClient::Connection::send_frame(ws::Opcode opcode, std::string payload) {
  if (closed_) return;
  uint8_t mask[4];
  uint32_t m = rng()();
  std::memcpy(mask, &m, 4);
  uint8_t header[ws::kMaxHeaderSize];
  size_t h = ws::encode_header(header, opcode, true, payload.size(), mask);
  ws::apply_mask(payload.data(), payload.size(), mask);
  // Frames queue in one buffer: a write of many small frames is one sendmsg.
  out_.append(reinterpret_cast<const char*>(header), h);
  out_ += payload;
  if (writing_.empty()) flush();
}

void SioClient::Connection::flush() {
  if (out_.empty() || closed_) return;
  writing_.swap(out_);
  out_.clear();
  write_all(asio::buffer(writing_), [self = shared_from_this()](const boost::system::error_code& ec, size_t) {
    self->writing_.clear();
    if (ec) return self->fail("write: " + ec.message());
    if (self->out_.empty() && self->closing_) return self->fail("client closed");
    self->flush();
  });
}

void SioClient::Connection::close() {
  if (closed_) return;
  if (upgraded_) {
    std::string disconnect = "4";
    sio::append_text(disconnect, sio::PacketType::kDisconnect, options_.nsp, std::nullopt, {});
    send_text(std::move(disconnect));
    send_frame(ws::Opcode::kClose, std::string{'\x03', '\xe8'});
  }
  // The socket is shut once the queued frames are out.
  closing_ = true;
  if (writing_.empty() && out_.empty()) fail("client closed");
}

void SioClient::Connection::fail(std::string reason) {
  if (closed_) return;
  closed_ = true;
  deadline_.cancel();
  ping_timer_.cancel();
  boost::system::error_code ec;
  socket_.shutdown(tcp::socket::shutdown_both, ec);
  socket_.close(ec);
  acks_.clear();
  if (auto done = std::move(on_connected_)) done(reason);
  if (auto handler = std::move(on_close_)) handler(reason);
}

}  // namespace siomq::client
