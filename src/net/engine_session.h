// One Engine.IO session: its transport (long-polling or WebSocket, with the upgrade between them),
// heartbeat, outbound queue and the handler above it. Lives on one worker and is only touched there.
#pragma once

#include <boost/asio/ip/tcp.hpp>
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "net/http_connection.h"
#include "net/out_frame.h"
#include "net/session_handler.h"
#include "net/transport_options.h"
#include "net/websocket_connection.h"
#include "wire/engineio.h"

namespace siomq::net {

class EngineServer;
class Worker;

class EngineSession : public std::enable_shared_from_this<EngineSession>, private WebSocketConnection::Listener {
 public:
  using Clock = std::chrono::steady_clock;

  EngineSession(EngineServer& server, Worker& worker, std::string sid, int protocol, const TransportOptions& options,
                std::string remote_address);
  ~EngineSession() override;

  const std::string& sid() const { return sid_; }
  const TransportOptions& options() const { return options_; }
  int protocol() const { return protocol_; }
  Worker& worker() { return worker_; }
  const std::string& remote_address() const { return remote_address_; }
  // The X-Forwarded-For header of the handshake ("" without one): the client's address behind a proxy.
  const std::string& forwarded_for() const {
    static const std::string kNone;
    return forwarded_for_ ? *forwarded_for_ : kNone;
  }
  void set_forwarded_for(std::string value) {
    forwarded_for_ = value.empty() ? nullptr : std::make_unique<std::string>(std::move(value));
  }
  // Whether the session was opened through the web console's port (EngineServer::handle's `console`): the
  // /console namespace serves no other.
  bool via_console() const { return via_console_; }
  void set_via_console() { via_console_ = true; }
  bool is_open() const { return !closed_; }
  bool is_websocket() const { return ws_ != nullptr; }

  // Opening: the handshake request's transport becomes the session's first transport.
  void open_polling(const std::shared_ptr<HttpConnection>& conn, const HttpRequest& request,
                    std::unique_ptr<SessionHandler> handler);
  void open_websocket(boost::asio::ip::tcp::socket socket, std::unique_ptr<TlsSession> tls, std::string leftover,
                      std::unique_ptr<SessionHandler> handler);

  // Later requests for this session (on this worker).
  void on_poll(const std::shared_ptr<HttpConnection>& conn, const HttpRequest& request);
  void on_post(const std::shared_ptr<HttpConnection>& conn, const HttpRequest& request);
  void on_upgrade_request(const std::shared_ptr<HttpConnection>& conn, const HttpRequest& request);

  // Queues a frame. A session whose queue outgrows the bound is closed as a slow consumer.
  void send(OutFrame frame);
  // `done(true)` once every frame queued before this call has been handed to the transport: written
  // to the WebSocket, or taken by a long-poll response. `done(false)` if the session closes first.
  void when_sent(SentReceipt done);
  // Closes the session: the handler hears `reason`; a WebSocket is closed after what is queued. With
  // `deliver_queued` (the application's own close) a polling client without a pending GET still gets what
  // was queued and the close packet on its next GET, as Engine.IO does.
  void close(std::string_view reason, bool deliver_queued = false);

  // Heartbeat and timeouts; returns the reason to close the session, if it must close.
  std::optional<std::string_view> tick(Clock::time_point now);

 private:
  struct PendingPoll {
    std::shared_ptr<HttpConnection> conn;
    unsigned version = 11;
    bool keep_alive = true;
    std::string origin;
  };
  static std::unique_ptr<PendingPoll> pending_poll(const std::shared_ptr<HttpConnection>& conn,
                                                   const HttpRequest& request);

  void on_ws_message(WebSocketConnection& ws, bool binary, std::string_view payload) override;
  void on_ws_closed(WebSocketConnection& ws) override;
  void on_probe_message(std::string_view payload);
  void on_packet(eio::Packet&& packet);
  void send_open_packet();
  // Closes a session whose outbound queue passed the bound, counting it.
  void cut_slow_consumer(size_t queued);
  void schedule_poll_flush();
  void flush_poll();
  // Answers the pending GET with everything queued, then `trailer` (a noop or close packet) if given.
  void answer_poll(std::string_view trailer = {});
  void finish_upgrade();

  EngineServer& server_;
  Worker& worker_;
  std::string sid_;
  const TransportOptions& options_;
  std::string remote_address_;
  std::unique_ptr<std::string> forwarded_for_;  // X-Forwarded-For, when the request had one
  std::unique_ptr<SessionHandler> handler_;

  std::shared_ptr<WebSocketConnection> ws_;     // the WebSocket transport, once there is one
  std::shared_ptr<WebSocketConnection> probe_;  // a WebSocket being probed for an upgrade
  std::unique_ptr<PendingPoll> poll_;           // the pending long-poll GET (null while none is pending)
  std::vector<OutFrame> queue_;                 // frames waiting for a GET
  size_t queued_bytes_ = 0;
  std::vector<SentReceipt> poll_receipts_;      // waiting for the GET that takes queue_
  // The small members together (an idle connection's bytes: docs/performance.md).
  int protocol_;
  bool via_console_ = false;
  bool poll_flush_scheduled_ = false;
  bool upgrading_ = false;
  bool closed_ = false;
  bool lingering_ = false;  // closed, still listed, waiting for a GET to take the close packet
  bool awaiting_pong_ = false;
  Clock::time_point linger_deadline_;

  Clock::time_point opened_at_;
  Clock::time_point next_ping_;      // v4: when the server pings next
  Clock::time_point pong_deadline_;  // v4: when an unanswered ping closes the session
  Clock::time_point heard_by_;       // v3: the client must ping before this
  Clock::time_point probe_started_;
};

}  // namespace siomq::net
