#include "transport/engine_socket.h"

#include <boost/asio/buffer.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <simdjson.h>

#include <cstring>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <unordered_map>

#include "wire/base64.h"
#include "wire/engineio.h"
#include "wire/socketio.h"
#include "transport/byte_stream.h"
#include "transport/http_exchange.h"
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

std::mt19937& rng() {
  thread_local std::mt19937 gen{std::random_device{}()};
  return gen;
}

}  // namespace

// One client TLS context per CA file, shared by the connections that use it (loading CAs is not cheap).
std::shared_ptr<asio::ssl::context> client_tls_context(const std::string& ca_file) {
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

bool parse_url(std::string_view url, TransportOptions& o) {
  bool has_scheme = false;
  for (std::string_view scheme : {"http://", "ws://", "https://", "wss://"}) {
    if (!url.starts_with(scheme)) continue;
    url.remove_prefix(scheme.size());
    o.tls = scheme.starts_with("https") || scheme.starts_with("wss");
    has_scheme = true;
    break;
  }
  size_t slash = url.find('/');
  std::string_view authority = url.substr(0, slash);
  if (slash != std::string_view::npos && url.size() > slash + 1) o.path = std::string(url.substr(slash));
  size_t colon = authority.rfind(':');
  if (authority.empty()) return false;
  if (colon == std::string_view::npos) {
    // A bare host keeps the tyo-mq port; a URL without one means the scheme's.
    o.host = std::string(authority);
    if (has_scheme) o.port = o.tls ? 443 : 80;
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

// The stream, the timers and the codecs' state.
class EngineSocket::Io {
 public:
  Io(asio::io_context& ctx, const TransportOptions& o)
      : ctx(ctx), stream(ctx, o), deadline(ctx), ping_timer(ctx), reader(false, o.max_message) {}

  asio::io_context& ctx;
  ByteStream stream;
  asio::steady_timer deadline;
  asio::steady_timer ping_timer;
  ws::Reader reader;
  sio::Decoder decoder;
  std::unordered_map<uint64_t, AckHandler> acks;
  std::set<std::string> joined;  // namespaces to say DISCONNECT to on close
  // Long-polling: the GET lane, the POST lane, and the packets waiting for the next POST.
  std::shared_ptr<HttpExchange> get, post;
  std::vector<std::pair<bool, std::string>> poll_out;  // (binary, bytes)
  bool posting = false;
};

EngineSocket::EngineSocket(asio::io_context& io, TransportOptions options, Callbacks callbacks)
    : options_(std::move(options)), callbacks_(std::move(callbacks)) {
  if (options_.path.empty() || options_.path.back() != '/') options_.path.push_back('/');
  io_ = std::make_unique<Io>(io, options_);
}

EngineSocket::~EngineSocket() = default;

void EngineSocket::open() {
  io_->deadline.expires_after(options_.timeout);
  io_->deadline.async_wait([weak = weak_from_this()](const boost::system::error_code& ec) {
    if (auto self = weak.lock(); self && !ec && !self->opened_) self->fail("timed out connecting");
  });
  if (options_.polling_only) return start_polling();
  io_->stream.connect([self = shared_from_this()](std::optional<std::string> failure) {
    if (self->closed_) return;
    if (failure) return self->fail(std::move(*failure));
    self->start_handshake();
  });
}

void EngineSocket::start_handshake() {
  unsigned char nonce[16];
  for (auto& b : nonce) b = static_cast<unsigned char>(rng()());
  key_ = base64::encode(std::string_view(reinterpret_cast<const char*>(nonce), sizeof nonce));
  auto request = std::make_shared<std::string>(
      "GET " + options_.path + "?EIO=" + std::to_string(options_.eio) + "&transport=websocket HTTP/1.1\r\nHost: " +
      options_.host + ":" + std::to_string(options_.port) +
      "\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: " + key_ +
      "\r\n\r\n");
  io_->stream.write(asio::buffer(*request), [self = shared_from_this(), request](const boost::system::error_code& wec, size_t) {
    if (wec) return self->fail("write: " + wec.message());
    self->read();
  });
}

void EngineSocket::read() {
  io_->stream.read_some([self = shared_from_this()](const boost::system::error_code& ec, size_t n) {
    if (self->closed_ || self->polling_) return;  // polling: this socket was closed on purpose
    if (ec) return self->fail(ec == asio::error::eof ? "connection closed by the server" : ec.message());
    self->on_bytes(n);
    if (!self->closed_ && !self->polling_) self->read();
  });
}

void EngineSocket::on_bytes(size_t n) {
  char* data = io_->stream.buffer();
  auto on_event = [this](const ws::Event& ev) {
    if (ev.kind == ws::Event::kPing) {
      send_frame(static_cast<int>(ws::Opcode::kPong), std::string(ev.payload));
      return true;
    }
    if (ev.kind == ws::Event::kClose) {
      fail("server closed the WebSocket");
      return false;
    }
    return ev.kind == ws::Event::kMessage ? on_ws_message(ev.binary, ev.payload) : true;
  };
  if (!upgraded_) {
    handshake_.append(data, n);
    size_t end = handshake_.find("\r\n\r\n");
    if (end == std::string::npos) {
      if (handshake_.size() > 16384) fail("handshake response too large");
      return;
    }
    std::string head = handshake_.substr(0, end);
    if (!head.starts_with("HTTP/1.1 101")) {
      if (!options_.polling_fallback) return fail("upgrade refused: " + head.substr(0, head.find('\r')));
      // A WebSocket refused (a proxy that does not pass it): the same session over long-polling.
      io_->stream.close();
      handshake_.clear();
      return start_polling();
    }
    if (head.find(ws::accept_key(key_)) == std::string::npos) return fail("bad Sec-WebSocket-Accept");
    upgraded_ = true;
    flush();  // anything queued before the upgrade
    std::string rest = handshake_.substr(end + 4);
    handshake_.clear();
    handshake_.shrink_to_fit();
    if (rest.empty()) return;
    auto st = io_->reader.feed(rest.data(), rest.size(), on_event);
    if (!st) fail("websocket: " + st.error().message);
    return;
  }
  auto st = io_->reader.feed(data, n, on_event);
  if (!st) fail("websocket: " + st.error().message);
}

bool EngineSocket::on_ws_message(bool binary, std::string_view payload) {
  if (binary && options_.eio == 3) {
    // Engine.IO v3 prefixes a binary message with its packet type (4).
    if (payload.empty() || payload[0] != 4) return !closed_;
    payload.remove_prefix(1);
  }
  if (binary) {
    on_attachment(std::string(payload));
  } else {
    on_eio_text(payload);
  }
  return !closed_;
}

void EngineSocket::on_attachment(std::string bytes) {
  auto r = io_->decoder.feed_binary(std::move(bytes));
  if (!r) return fail("bad attachment: " + r.error().message);
  if (!r->has_value()) return;  // more attachments to come
  sio::Packet& p = **r;
  on_sio_packet(std::move(p.nsp), static_cast<int>(p.type), p.id, std::move(p.event), std::move(p.data),
                std::move(p.attachments));
}

void EngineSocket::on_eio_text(std::string_view text) {
  auto packet = eio::decode_text(text);
  if (!packet) return fail("bad Engine.IO packet");
  switch (packet->type) {
    case eio::PacketType::kOpen:
      on_open_packet(packet->data);
      break;
    case eio::PacketType::kPing:
      send_text("3" + packet->data);
      break;
    case eio::PacketType::kClose:
      fail("server closed the session");
      break;
    case eio::PacketType::kMessage: {
      auto r = io_->decoder.feed_text(packet->data);
      if (!r) return fail("bad Socket.IO packet: " + r.error().message);
      if (r->has_value()) {
        sio::Packet& p = **r;
        on_sio_packet(std::move(p.nsp), static_cast<int>(p.type), p.id, std::move(p.event), std::move(p.data),
                      std::move(p.attachments));
      }
      break;
    }
    default:
      break;
  }
}

void EngineSocket::on_open_packet(std::string_view json) {
  if (opened_) return;
  engine_id_ = string_field(json, "sid");
  opened_ = true;
  io_->deadline.cancel();
  if (options_.eio == 3) {
    simdjson::dom::parser parser;
    auto doc = parser.parse(json.data(), json.size());
    if (!doc.error()) {
      auto interval = doc.value_unsafe()["pingInterval"].get_int64();
      if (!interval.error() && interval.value_unsafe() > 0) ping_interval_ = std::chrono::milliseconds(interval.value_unsafe());
    }
    schedule_ping();
  }
  if (callbacks_.opened) callbacks_.opened();
}

void EngineSocket::join(const std::string& nsp, std::string_view auth) {
  if (closed_) return;
  if (options_.eio == 3 && nsp == "/") {
    // v3: the server joins "/" by itself; answer once its CONNECT has come.
    v3_root_wanted_ = true;
    io_->joined.insert(nsp);
    if (v3_root_joined_ && callbacks_.joined) callbacks_.joined(nsp, std::nullopt, engine_id_);
    return;
  }
  std::string connect = "4";
  sio::append_text(connect, sio::PacketType::kConnect, nsp, std::nullopt, options_.eio == 3 ? std::string_view{} : auth);
  send_text(std::move(connect));
}

void EngineSocket::on_sio_packet(std::string&& nsp, int type, std::optional<uint64_t> id, std::string&& event,
                                 std::string&& data, std::vector<std::string>&& attachments) {
  switch (static_cast<sio::PacketType>(type)) {
    case sio::PacketType::kConnect: {
      std::string sid;
      if (options_.eio == 3) {
        // v3: the socket id is the session id ("/nsp#sid" elsewhere than "/").
        sid = nsp == "/" ? engine_id_ : nsp + "#" + engine_id_;
        if (nsp == "/") {
          v3_root_joined_ = true;
          if (!v3_root_wanted_) break;
        }
      } else {
        sid = string_field(data, "sid");
      }
      io_->joined.insert(nsp);
      if (callbacks_.joined) callbacks_.joined(nsp, std::nullopt, sid);
      break;
    }
    case sio::PacketType::kConnectError: {
      std::string message = string_field(data, "message");
      if (message.empty() && data.size() > 1 && data.front() == '"') message = data.substr(1, data.size() - 2);
      if (callbacks_.joined) callbacks_.joined(nsp, message.empty() ? data : message, {});
      break;
    }
    case sio::PacketType::kDisconnect:
      io_->joined.erase(nsp);
      if (callbacks_.left) callbacks_.left(nsp);
      break;
    case sio::PacketType::kEvent:
    case sio::PacketType::kBinaryEvent:
      if (callbacks_.event) callbacks_.event(Incoming{std::move(nsp), std::move(event), std::move(data), std::move(attachments)});
      break;
    case sio::PacketType::kAck:
    case sio::PacketType::kBinaryAck: {
      if (!id) break;
      auto it = io_->acks.find(*id);
      if (it == io_->acks.end()) break;
      AckHandler handler = std::move(it->second);
      io_->acks.erase(it);
      handler(Incoming{std::move(nsp), {}, std::move(data), std::move(attachments)});
      break;
    }
  }
}

uint64_t EngineSocket::emit(std::string_view nsp, std::string_view event, std::string_view args,
                            std::vector<std::string> attachments, AckHandler on_ack) {
  if (closed_) return 0;
  std::string data = "[";
  sio::append_json_string(data, event);
  if (!args.empty()) {
    data.push_back(',');
    data.append(args);
  }
  data.push_back(']');
  return emit_data(nsp, data, std::move(attachments), std::move(on_ack));
}

uint64_t EngineSocket::emit_data(std::string_view nsp, std::string_view data, std::vector<std::string> attachments,
                                 AckHandler on_ack) {
  if (closed_) return 0;
  std::optional<uint64_t> id;
  if (on_ack) {
    id = next_ack_++;
    io_->acks.emplace(*id, std::move(on_ack));
  }
  std::string text = "4";
  sio::append_text(text, attachments.empty() ? sio::PacketType::kEvent : sio::PacketType::kBinaryEvent, nsp, id, data,
                   attachments.size());
  send_text(std::move(text));
  for (auto& a : attachments) send_binary(std::move(a));
  return id.value_or(0);
}

void EngineSocket::forget_ack(uint64_t id) { io_->acks.erase(id); }

void EngineSocket::schedule_ping() {
  io_->ping_timer.expires_after(ping_interval_);
  io_->ping_timer.async_wait([weak = weak_from_this()](const boost::system::error_code& ec) {
    auto self = weak.lock();
    if (!self || ec || self->closed_) return;
    self->send_text("2");
    self->schedule_ping();
  });
}

void EngineSocket::send_text(std::string text) {
  if (polling_) {
    io_->poll_out.emplace_back(false, std::move(text));
    return post_queued();
  }
  send_frame(static_cast<int>(ws::Opcode::kText), std::move(text));
}

void EngineSocket::send_binary(std::string bytes) {
  if (polling_) {
    io_->poll_out.emplace_back(true, std::move(bytes));
    return post_queued();
  }
  // Engine.IO v3 prefixes a binary message with its packet type (4, message).
  if (options_.eio == 3) bytes.insert(bytes.begin(), '\x04');
  send_frame(static_cast<int>(ws::Opcode::kBinary), std::move(bytes));
}

std::string EngineSocket::polling_target() const {
  std::string target = options_.path + "?EIO=" + std::to_string(options_.eio) + "&transport=polling&t=" +
                       std::to_string(rng()());
  if (!engine_id_.empty()) target += "&sid=" + engine_id_;
  return target;
}

void EngineSocket::start_polling() {
  polling_ = true;
  upgraded_ = false;
  io_->get = std::make_shared<HttpExchange>(io_->ctx, options_);
  io_->post = std::make_shared<HttpExchange>(io_->ctx, options_);
  poll();  // the first GET is the handshake: its answer is the open packet
}

void EngineSocket::poll() {
  io_->get->request("GET", polling_target(), {},
                    [self = shared_from_this()](std::optional<std::string> failure, int status, std::string body) {
                      if (self->closed_) return;
                      if (failure) return self->fail("polling: " + *failure);
                      if (status != 200) return self->fail("polling: HTTP " + std::to_string(status) + " " + body.substr(0, 200));
                      self->on_payload(body);
                      if (!self->closed_) self->poll();
                    });
}

void EngineSocket::on_payload(const std::string& body) {
  auto packets = eio::decode_payload(body, options_.eio, false, options_.max_message);
  if (!packets) return fail("bad polling payload: " + packets.error().message);
  for (auto& p : *packets) {
    if (closed_) return;
    if (p.binary) {
      on_attachment(std::move(p.data));
      continue;
    }
    std::string text(1, static_cast<char>('0' + static_cast<int>(p.type)));
    text += p.data;
    on_eio_text(text);
    if (p.type == eio::PacketType::kOpen) post_queued();  // what waited for the session id
  }
}

void EngineSocket::post_queued() {
  if (io_->posting || io_->poll_out.empty() || engine_id_.empty() || closed_) return;
  std::vector<eio::Frame> frames;
  frames.reserve(io_->poll_out.size());
  for (auto& [binary, bytes] : io_->poll_out) frames.push_back(eio::Frame{binary, bytes});
  std::string body = eio::encode_payload(frames, options_.eio);
  io_->poll_out.clear();
  io_->posting = true;
  io_->post->request("POST", polling_target(), std::move(body),
                     [self = shared_from_this()](std::optional<std::string> failure, int status, std::string) {
                       self->io_->posting = false;
                       if (self->closed_) return;
                       if (failure) return self->fail("polling: " + *failure);
                       if (status != 200) return self->fail("polling: POST answered HTTP " + std::to_string(status));
                       if (self->closing_ && self->io_->poll_out.empty()) return self->fail("client closed");
                       self->post_queued();
                     });
}

void EngineSocket::send_frame(int opcode, std::string payload) {
  if (closed_) return;
  uint8_t mask[4];
  uint32_t m = rng()();
  std::memcpy(mask, &m, 4);
  uint8_t header[ws::kMaxHeaderSize];
  size_t h = ws::encode_header(header, static_cast<ws::Opcode>(opcode), true, payload.size(), mask);
  ws::apply_mask(payload.data(), payload.size(), mask);
  // Frames queue in one buffer: a write of many small frames is one sendmsg.
  out_.append(reinterpret_cast<const char*>(header), h);
  out_ += payload;
  if (writing_.empty() && upgraded_) flush();
}

void EngineSocket::flush() {
  if (out_.empty() || closed_) return;
  writing_.swap(out_);
  out_.clear();
  io_->stream.write(asio::buffer(writing_), [self = shared_from_this()](const boost::system::error_code& ec, size_t) {
    self->writing_.clear();
    if (self->closed_) return;
    if (ec) return self->fail("write: " + ec.message());
    if (self->out_.empty() && self->closing_) return self->fail("client closed");
    self->flush();
  });
}

void EngineSocket::close() {
  if (closed_ || closing_) return;
  if (polling_ && !engine_id_.empty()) {
    for (const auto& nsp : io_->joined) {
      std::string disconnect = "4";
      sio::append_text(disconnect, sio::PacketType::kDisconnect, nsp, std::nullopt, {});
      send_text(std::move(disconnect));
    }
    send_text("1");  // the Engine.IO close packet
    closing_ = true;
    if (!io_->posting && io_->poll_out.empty()) fail("client closed");
    return;
  }
  if (upgraded_) {
    for (const auto& nsp : io_->joined) {
      std::string disconnect = "4";
      sio::append_text(disconnect, sio::PacketType::kDisconnect, nsp, std::nullopt, {});
      send_text(std::move(disconnect));
    }
    send_frame(static_cast<int>(ws::Opcode::kClose), std::string{'\x03', '\xe8'});
  }
  // The socket is shut once the queued frames are out.
  closing_ = true;
  if (writing_.empty() && out_.empty()) fail("client closed");
}

void EngineSocket::fail(std::string reason) {
  if (closed_) return;
  closed_ = true;
  io_->deadline.cancel();
  io_->ping_timer.cancel();
  io_->stream.close();
  if (io_->get) io_->get->close();
  if (io_->post) io_->post->close();
  io_->acks.clear();
  if (auto closed = std::move(callbacks_.closed)) closed(reason);
  callbacks_ = {};  // the owner's captures go now, not when the last pending operation lets go
}

}  // namespace siomq::client
