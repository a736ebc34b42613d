#include "net/engine_session.h"

#include <boost/asio/post.hpp>
#include <spdlog/spdlog.h>

#include "net/engine_server.h"
#include "net/worker_pool.h"

namespace siomq::net {
namespace http = boost::beast::http;
using boost::asio::ip::tcp;

namespace {

// Every session's heartbeat ping is the same bytes (made once, so with no read's stamp: write_latency.h).
const OutFrame& ping_frame() {
  static const OutFrame ping = [] {
    OutFrame f = text_frame("2");
    f.read_us = 0;
    return f;
  }();
  return ping;
}

}  // namespace

EngineSession::EngineSession(EngineServer& server, Worker& worker, std::string sid, int protocol,
                             const TransportOptions& options, std::string remote_address)
    : server_(server), worker_(worker), sid_(std::move(sid)), options_(options),
      remote_address_(std::move(remote_address)), protocol_(protocol) {
  opened_at_ = Clock::now();
  next_ping_ = opened_at_ + options_.ping_interval;
  heard_by_ = opened_at_ + options_.ping_interval + options_.ping_timeout;
}

EngineSession::~EngineSession() {
  for (auto& done : poll_receipts_) done(false);
  if (ws_) ws_->set_listener(nullptr);
  if (probe_) probe_->set_listener(nullptr);
}

void EngineSession::send_open_packet() {
  std::string open = "0{\"sid\":\"" + sid_ + "\",\"upgrades\":" + (ws_ ? "[]" : "[\"websocket\"]") +
                     ",\"pingInterval\":" + std::to_string(options_.ping_interval.count()) +
                     ",\"pingTimeout\":" + std::to_string(options_.ping_timeout.count()) +
                     ",\"maxPayload\":" + std::to_string(options_.max_payload) + "}";
  send(text_frame(std::move(open)));
}

std::unique_ptr<EngineSession::PendingPoll> EngineSession::pending_poll(const std::shared_ptr<HttpConnection>& conn,
                                                                       const HttpRequest& request) {
  return std::make_unique<PendingPoll>(
      PendingPoll{conn, request.version(), request.keep_alive(), std::string(request[http::field::origin])});
}

void EngineSession::open_polling(const std::shared_ptr<HttpConnection>& conn, const HttpRequest& request,
                                 std::unique_ptr<SessionHandler> handler) {
  handler_ = std::move(handler);
  // The handshake GET is answered with the open packet alone; what the handler sends next waits
  // for the following GET, as the reference does.
  send_open_packet();
  poll_ = pending_poll(conn, request);
  answer_poll();
  handler_->on_open();
}

void EngineSession::open_websocket(tcp::socket socket, std::unique_ptr<TlsSession> tls, std::string leftover,
                                   std::unique_ptr<SessionHandler> handler) {
  handler_ = std::move(handler);
  ws_ = std::make_shared<WebSocketConnection>(std::move(socket), options_.max_payload, protocol_ == 3, std::move(tls));
  ws_->start(this, std::move(leftover));
  if (closed_) return;
  send_open_packet();
  handler_->on_open();
}

void EngineSession::on_poll(const std::shared_ptr<HttpConnection>& conn, const HttpRequest& request) {
  if (closed_) {
    // Closed by the server while no GET was pending: this GET takes what was queued and the close packet.
    poll_ = pending_poll(conn, request);
    answer_poll("1");
    if (lingering_) {
      lingering_ = false;
      server_.forget(*this);
    }
    return;
  }
  if (poll_) {
    // Two pending GETs for one session is a protocol error: refuse the new one and close the session.
    auto res = EngineServer::error_response(request, EngineError::kBadRequest);
    conn->respond(std::move(res));
    close("overlap from client");
    return;
  }
  poll_ = pending_poll(conn, request);
  // A client that goes away during a long poll is gone: Engine.IO closes the session at once.
  conn->watch_for_close([weak = weak_from_this(), raw = conn.get()] {
    auto self = weak.lock();
    if (self && self->poll_ && self->poll_->conn.get() == raw) {
      self->poll_.reset();
      self->close("poll connection closed prematurely");
    }
  });
  if (!queue_.empty() || upgrading_) schedule_poll_flush();
}

void EngineSession::on_post(const std::shared_ptr<HttpConnection>& conn, const HttpRequest& request) {
  if (closed_) {
    conn->respond(EngineServer::error_response(request, EngineError::kUnknownSid));
    return;
  }
  bool binary_body = request[http::field::content_type].starts_with("application/octet-stream");
  auto packets = eio::decode_payload(request.body(), protocol_, binary_body, options_.max_payload);
  if (!packets) {
    spdlog::info("session {} ({}): malformed polling payload: {}", sid_, remote_address_, packets.error().message);
    conn->respond(EngineServer::error_response(request, EngineError::kBadRequest));
    close("parse error");
    return;
  }
  auto res = make_response(request, http::status::ok, "ok", "text/html");
  EngineServer::add_cors(res, request[http::field::origin]);
  conn->respond(std::move(res));
  auto self = shared_from_this();
  for (auto& p : *packets) {
    if (closed_) break;
    on_packet(std::move(p));
  }
}

void EngineSession::on_upgrade_request(const std::shared_ptr<HttpConnection>& conn, const HttpRequest& request) {
  if (ws_ || probe_ || closed_) {
    conn->respond(EngineServer::error_response(request, EngineError::kBadRequest));
    return;
  }
  std::weak_ptr<EngineSession> weak = weak_from_this();
  conn->accept_websocket(request, [weak, this](tcp::socket socket, std::unique_ptr<TlsSession> tls, std::string leftover) {
    auto self = weak.lock();
    auto ws = std::make_shared<WebSocketConnection>(std::move(socket), options_.max_payload, protocol_ == 3,
                                                    std::move(tls));
    if (!self || closed_ || ws_ || probe_) {
      ws->start(nullptr);
      ws->close(ws::kCloseGoingAway);
      return;
    }
    probe_ = ws;
    probe_started_ = Clock::now();
    probe_->start(this, std::move(leftover));
  });
}

void EngineSession::on_ws_message(WebSocketConnection& ws, bool binary, std::string_view payload) {
  auto self = shared_from_this();
  if (&ws == probe_.get()) {
    if (binary) {
      probe_->close(ws::kCloseProtocolError);
      return;
    }
    on_probe_message(payload);
    return;
  }
  if (!binary && !payload.empty() && payload[0] == '4') {
    // A text message, the common case: handed on as a view of the frame, not copied into a packet.
    if (protocol_ == 3) heard_by_ = Clock::now() + options_.ping_interval + options_.ping_timeout;
    if (!handler_->on_text(payload.substr(1))) {
      spdlog::info("session {} ({}): malformed Socket.IO packet", sid_, remote_address_);
      close("parse error");
    }
    return;
  }
  auto packet = binary ? eio::decode_binary(payload, protocol_) : eio::decode_text(payload);
  if (!packet) {
    spdlog::info("session {} ({}): malformed packet: {}", sid_, remote_address_, packet.error().message);
    close("parse error");
    return;
  }
  on_packet(std::move(*packet));
}

void EngineSession::on_probe_message(std::string_view payload) {
  if (payload == "2probe" && !upgrading_) {
    upgrading_ = true;
    probe_->send(text_frame("3probe"));
    // Release the pending GET so that the client can pause polling and finish the upgrade.
    if (poll_) schedule_poll_flush();
    return;
  }
  if (payload == "5" && upgrading_) {
    finish_upgrade();
    return;
  }
  spdlog::debug("session {}: invalid upgrade packet", sid_);
  probe_->set_listener(nullptr);
  probe_->close(ws::kCloseProtocolError);
  probe_.reset();
  upgrading_ = false;
}

void EngineSession::finish_upgrade() {
  ws_ = std::move(probe_);
  upgrading_ = false;
  auto pending = std::move(queue_);
  queue_.clear();
  queued_bytes_ = 0;
  // Receipts for frames that were waiting for a GET now wait for the WebSocket to write them (taken
  // before the last GET is answered, which would otherwise count them as sent).
  auto receipts = std::move(poll_receipts_);
  poll_receipts_.clear();
  if (poll_) answer_poll("6");
  for (auto& f : pending) ws_->send(std::move(f));
  for (auto& done : receipts) ws_->when_written(std::move(done));
}

void EngineSession::on_ws_closed(WebSocketConnection& ws) {
  if (&ws == probe_.get()) {
    probe_.reset();
    upgrading_ = false;
    return;
  }
  if (&ws == ws_.get()) close("transport close");
}

void EngineSession::on_packet(eio::Packet&& packet) {
  if (protocol_ == 3) heard_by_ = Clock::now() + options_.ping_interval + options_.ping_timeout;
  switch (packet.type) {
    case eio::PacketType::kMessage: {
      bool ok = packet.binary ? handler_->on_binary(std::move(packet.data)) : handler_->on_text(packet.data);
      if (!ok) {
        spdlog::info("session {} ({}): malformed Socket.IO packet", sid_, remote_address_);
        close("parse error");
      }
      break;
    }
    case eio::PacketType::kPong:
      if (protocol_ == 4) {
        awaiting_pong_ = false;
        next_ping_ = Clock::now() + options_.ping_interval;
      }
      break;
    case eio::PacketType::kPing:
      // Engine.IO v3 clients ping and the server answers; v4 servers ping and clients answer.
      if (protocol_ == 3) send(text_frame("3" + packet.data));
      break;
    case eio::PacketType::kClose:
      close("transport close");
      break;
    default:
      break;
  }
}

void EngineSession::send(OutFrame frame) {
  if (closed_) return;
  if (ws_) {
    ws_->send(std::move(frame));
    if (ws_ && ws_->queued_bytes() > options_.max_outbound_bytes) cut_slow_consumer(ws_->queued_bytes());
    return;
  }
  queued_bytes_ += frame.size();
  queue_.push_back(std::move(frame));
  if (queued_bytes_ > options_.max_outbound_bytes) {
    cut_slow_consumer(queued_bytes_);
    return;
  }
  if (poll_) schedule_poll_flush();
}

void EngineSession::when_sent(SentReceipt done) {
  if (closed_) return done(false);
  if (ws_) return ws_->when_written(std::move(done));
  // Polling (or upgrading): the next GET takes everything queued.
  if (queue_.empty()) return done(true);
  poll_receipts_.push_back(std::move(done));
}

void EngineSession::cut_slow_consumer(size_t queued) {
  uint64_t total = server_.count_slow_consumer();
  spdlog::warn("session {} ({}): slow consumer, {} bytes queued; closing ({} so far)", sid_, remote_address_, queued,
               total);
  close("slow consumer");
}

void EngineSession::schedule_poll_flush() {
  if (poll_flush_scheduled_) return;
  poll_flush_scheduled_ = true;
  boost::asio::post(worker_.io(), [self = shared_from_this()] {
    self->poll_flush_scheduled_ = false;
    self->flush_poll();
  });
}

void EngineSession::flush_poll() {
  if (!poll_ || closed_) return;
  if (!queue_.empty()) answer_poll();
  else if (upgrading_) answer_poll("6");
}

void EngineSession::answer_poll(std::string_view trailer) {
  PendingPoll poll = std::move(*poll_);
  poll_.reset();
  std::vector<eio::Frame> frames;
  frames.reserve(queue_.size() + 1);
  for (const auto& f : queue_) frames.push_back({f.binary, *f.bytes});
  if (!trailer.empty()) frames.push_back({false, trailer});
  std::string body = eio::encode_payload(frames, protocol_);
  queue_.clear();
  queued_bytes_ = 0;
  HttpResponse res{http::status::ok, poll.version};
  res.set(http::field::content_type, "text/plain; charset=UTF-8");
  EngineServer::add_cors(res, poll.origin);
  res.keep_alive(poll.keep_alive);
  res.body() = std::move(body);
  res.prepare_payload();
  poll.conn->respond(std::move(res));
  auto receipts = std::move(poll_receipts_);
  poll_receipts_.clear();
  for (auto& done : receipts) done(true);
}

void EngineSession::close(std::string_view reason, bool deliver_queued) {
  if (closed_) return;
  closed_ = true;
  auto self = shared_from_this();
  spdlog::debug("session {} closed: {}", sid_, reason);
  // Over polling the close packet (after what is queued) goes to the pending GET. With none pending, an
  // application close keeps the session registered, doing nothing else, until the next GET takes the
  // packets or ping_timeout passes.
  bool linger = false;
  if (poll_) {
    answer_poll("1");
  } else if (!ws_ && deliver_queued) {
    linger = true;
    lingering_ = true;
    linger_deadline_ = Clock::now() + options_.ping_timeout;
  }
  if (probe_) {
    probe_->set_listener(nullptr);
    probe_->close(ws::kCloseGoingAway);
    probe_.reset();
  }
  if (ws_) {
    ws_->set_listener(nullptr);
    ws_->close(ws::kCloseNormal);
  }
  // Frames still waiting for a GET may never be taken (a lingering session's next GET is not sure to
  // come): their receipts say "not sent", so whatever depends on them is kept, not dropped.
  auto unsent = std::move(poll_receipts_);
  poll_receipts_.clear();
  for (auto& done : unsent) done(false);
  if (handler_) {
    std::shared_ptr<SessionHandler> handler = std::move(handler_);
    handler->on_close(reason);
    // Destroyed once the current call unwinds: a handler up the stack may still be using it.
    boost::asio::post(worker_.io(), [handler] {});
  }
  if (!linger) server_.forget(*this);
}

std::optional<std::string_view> EngineSession::tick(Clock::time_point now) {
  if (closed_) {
    if (lingering_ && now >= linger_deadline_) {
      lingering_ = false;
      queue_.clear();
      queued_bytes_ = 0;
      server_.forget(*this);
    }
    return std::nullopt;
  }
  if (probe_ && now - probe_started_ > options_.upgrade_timeout) {
    probe_->set_listener(nullptr);
    probe_->close(ws::kCloseGoingAway);
    probe_.reset();
    upgrading_ = false;
  }
  if (handler_ && !handler_->joined() && now - opened_at_ > options_.connect_timeout) return "connect timeout";
  // A binary packet's attachments get one heartbeat period (ping interval + timeout) to arrive in full.
  if (handler_ && handler_->unfinished_since(now - options_.ping_interval - options_.ping_timeout))
    return "attachments timeout";
  if (protocol_ == 3) {
    if (now >= heard_by_) return "ping timeout";
    return std::nullopt;
  }
  if (awaiting_pong_) {
    if (now >= pong_deadline_) return "ping timeout";
  } else if (now >= next_ping_) {
    awaiting_pong_ = true;
    pong_deadline_ = now + options_.ping_timeout;
    send(ping_frame());
  }
  return std::nullopt;
}

}  // namespace siomq::net
