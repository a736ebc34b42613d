// A server-side WebSocket over a TCP socket taken from an HTTP connection after the 101 response, with
// the connection's TLS session when it came in on a TLS port.
//
// Reads wait for readability and then read into a per-thread scratch buffer, so an idle connection
// owns no read buffer. Writes queue frames and flush them, once per loop turn, as one gather write (over
// TLS: one buffer, written record by record by the TLS session).
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "net/connection_count.h"
#include "net/inbound_budget.h"
#include "net/out_frame.h"
#include "net/tls_session.h"
#include "wire/websocket.h"

namespace siomq::net {

class WebSocketConnection : public std::enable_shared_from_this<WebSocketConnection> {
 public:
  // The socket and the close's timer name their io_context's executor type rather than the polymorphic
  // any_io_executor: every operation pending on them (an idle connection always has its readability
  // wait) then carries an 8-byte executor instead of two type-erased ones, about 170 bytes less a
  // connection (docs/performance.md, "An idle connection").
  using Socket = boost::asio::basic_stream_socket<boost::asio::ip::tcp, boost::asio::io_context::executor_type>;
  using Timer = boost::asio::basic_waitable_timer<std::chrono::steady_clock,
                                                  boost::asio::wait_traits<std::chrono::steady_clock>,
                                                  boost::asio::io_context::executor_type>;

  // Receives what arrives; called on the connection's thread.
  class Listener {
   public:
    virtual ~Listener() = default;
    virtual void on_ws_message(WebSocketConnection& ws, bool binary, std::string_view payload) = 0;
    virtual void on_ws_closed(WebSocketConnection& ws) = 0;
  };

  // `prefix_binary` sends a 0x04 byte before each binary message (Engine.IO v3). `tls`: the connection's
  // TLS session (handshake done), null for plain TCP.
  WebSocketConnection(boost::asio::ip::tcp::socket socket, size_t max_message, bool prefix_binary,
                      std::unique_ptr<TlsSession> tls = nullptr);
  ~WebSocketConnection();

  // Starts reading; `initial` holds bytes the HTTP parser read past the handshake.
  void start(Listener* listener, std::string initial = {});
  // Replaces the listener (or detaches it with null); the listener must outlive the connection otherwise.
  void set_listener(Listener* listener) { listener_ = listener; }

  void send(OutFrame frame);
  // `done(true)` once every frame queued before this call is written to the socket; `done(false)` if the
  // connection closes first. Immediately when nothing is queued.
  void when_written(SentReceipt done);
  // Sends a close frame after what is queued, then shuts the socket down.
  void close(uint16_t code = ws::kCloseNormal);
  bool is_open() const { return !closing_ && !closed_; }
  size_t queued_bytes() const { return queued_bytes_; }

 private:
  void wait_readable();
  void on_readable();
  bool handle_event(const ws::Event& ev);
  void schedule_flush();
  void flush();
  void flush_tls();
  void write_tls();
  void write_done();
  // One read without waiting, into `buf`: from the socket, or through the TLS session.
  size_t read_some(char* buf, size_t size, boost::system::error_code& ec);
  void fire_receipts();
  void finish();
  void send_control(ws::Opcode op, std::string payload);
  // Reading again after on_readable: at once, or once the server-wide inbound budget has room.
  void read_on();
  void check_pause();

  [[no_unique_address]] ConnectionCount counted_;
  Socket socket_;
  std::unique_ptr<TlsSession> tls_;
  size_t tls_sent_ = 0;  // TLS: bytes of packed_ written
  ws::Reader reader_;
  Listener* listener_ = nullptr;
  struct Item {
    std::shared_ptr<const std::string> bytes;
    ws::Opcode opcode;
    uint32_t read_us = 0;  // the read that caused it (write_latency.h); 0: none
  };
  std::vector<Item> queue_;  // being written (the first inflight_), then waiting to be written
  std::string packed_;       // an in-flight write that waits (TLS: any): headers, payloads < kCopyLimit
  size_t queued_bytes_ = 0;
  uint64_t queued_items_ = 0, written_items_ = 0;  // frames ever queued / written: receipts count them
  std::vector<std::pair<uint64_t, SentReceipt>> receipts_;  // (queued_items_ when asked, receipt), in order
  // The small members together (an idle connection's bytes: docs/performance.md).
  uint32_t inflight_ = 0;  // frames at the head of queue_ being written (at most what one write packs)
  bool prefix_binary_;
  // TLS: the session may hold decrypted bytes the socket no longer signals: read again before waiting.
  bool tls_more_ = true;
  bool tls_read_wants_write_ = false;  // TLS: the last read waits for the socket to take bytes
  bool flush_scheduled_ = false;
  bool writing_ = false;
  bool closing_ = false;  // close frame queued; nothing more is sent
  bool closed_ = false;   // socket shut
  std::unique_ptr<Timer> close_timer_;     // the close's deadline (allocated only by a close)
  InboundBudget inbound_;                  // what reader_ holds of unfinished input, in the server's total
  struct Pause {
    boost::asio::steady_timer timer;
    std::chrono::steady_clock::time_point since;
  };
  std::unique_ptr<Pause> pause_;  // reading paused over the inbound budget (allocated only then)
};

}  // namespace siomq::net
