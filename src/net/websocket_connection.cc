#include "net/websocket_connection.h"

#include <boost/asio/buffer.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>
#include <spdlog/spdlog.h>

#include <array>

#include "net/socket_handoff.h"

namespace siomq::net {
namespace asio = boost::asio;
using asio::ip::tcp;

namespace {
// Reads land here and are parsed in place; only an unfinished frame is copied into the connection.
thread_local std::array<char, 65536> t_scratch;
// At most this many reads per readiness event, so one busy client cannot starve the others.
constexpr int kReadsPerWake = 8;
// A payload this size or larger is written from its own buffer instead of being copied.
constexpr size_t kCopyLimit = 4096;
// A write carries at most this many large payloads (Asio gives sendmsg at most 64 buffers) ...
constexpr size_t kMaxLarge = 30;
// ... and stops adding frames once this much is packed.
constexpr size_t kPackLimit = 64 * 1024;  // (what a connection holds beyond its queue while writing)
// A close waits this long for what is queued (and the close frame) to be written; a peer that does not
// read by then is reset, so a stalled peer cannot hold its queued frames forever.
constexpr auto kCloseDeadline = std::chrono::seconds(5);
// Over the inbound budget, a paused connection looks again this often, and gives up after kMaxPause:
// connections that all hold part of a message and wait for room cannot hold the budget forever.
constexpr auto kPauseRecheck = std::chrono::milliseconds(50);
// Only a connection holding at least this much of an unfinished message pauses: one read's worth is
// what any connection may hold between reads.
constexpr size_t kPauseAbove = 64 * 1024;
constexpr auto kMaxPause = std::chrono::seconds(10);
constexpr uint16_t kCloseTryAgainLater = 1013;

// The accepted socket moved onto its io_context's own executor type (see socket_ in the header). A socket
// that cannot be handed on (reset already) leaves this one closed: the first wait ends the connection.
WebSocketConnection::Socket own_executor(tcp::socket socket) {
  WebSocketConnection::Socket own(socket.get_executor().target<asio::io_context::executor_type>()->context());
  if (auto handoff = hand_off(socket)) take(own, *handoff);
  return own;
}
}  // namespace

WebSocketConnection::WebSocketConnection(tcp::socket socket, size_t max_message, bool prefix_binary,
                                         std::unique_ptr<TlsSession> tls)
    : socket_(own_executor(std::move(socket))), tls_(std::move(tls)), reader_(true, max_message),
      prefix_binary_(prefix_binary) {
  boost::system::error_code ec;
  socket_.non_blocking(true, ec);
  socket_.set_option(tcp::no_delay(true), ec);
}

WebSocketConnection::~WebSocketConnection() {
  for (auto& [at, done] : receipts_) done(false);  // every receipt is answered, whatever ends the connection
}

void WebSocketConnection::start(Listener* listener, std::string initial) {
  listener_ = listener;
  if (!initial.empty()) {
    auto st = reader_.feed(initial.data(), initial.size(), [this](const ws::Event& ev) { return handle_event(ev); });
    if (!st) {
      close(static_cast<uint16_t>(st.error().code));
      return;
    }
  }
  wait_readable();
}

void WebSocketConnection::wait_readable() {
  if (closed_) return;
  if (tls_ && tls_more_) {
    asio::post(socket_.get_executor(), [self = shared_from_this()] {
      if (!self->closed_) self->on_readable();
    });
    return;
  }
  auto wait = tls_ && tls_read_wants_write_ ? tcp::socket::wait_write : tcp::socket::wait_read;
  socket_.async_wait(wait,
                     [self = shared_from_this()](const boost::system::error_code& ec) {
                       if (ec) {
                         self->finish();
                         return;
                       }
                       self->on_readable();
                     });
}

void WebSocketConnection::on_readable() {
  auto self = shared_from_this();  // a handler may drop the last outside reference
  tls_more_ = true;
  for (int i = 0; i < kReadsPerWake && !closed_; ++i) {
    boost::system::error_code ec;
    size_t n = read_some(t_scratch.data(), t_scratch.size(), ec);
    if (ec == asio::error::would_block || ec == asio::error::try_again) {
      tls_more_ = false;
      break;
    }
    if (ec || n == 0) {
      finish();
      return;
    }
    if (closing_) continue;  // after our close frame, input is drained and ignored
    ReadStamp stamp;  // the frames this read causes carry its time, to the write (write_latency.h)
    auto st = reader_.feed(t_scratch.data(), n, [this](const ws::Event& ev) { return handle_event(ev); });
    if (!st) {
      spdlog::debug("websocket: {}", st.error().message);
      close(static_cast<uint16_t>(st.error().code));
    }
    // A short read drained the socket; a TLS read returns one record at most, so it reads on.
    if (!tls_ && n < t_scratch.size()) break;
  }
  if (!closed_) {
    if (closing_ && !writing_ && queue_.empty()) {
      finish();
      return;
    }
    read_on();
  }
}

size_t WebSocketConnection::read_some(char* buf, size_t size, boost::system::error_code& ec) {
  if (!tls_) return socket_.read_some(asio::buffer(buf, size), ec);
  TlsResult r = tls_->read(buf, size);
  tls_read_wants_write_ = r.wait == TlsResult::Wait::kWrite;
  if (r.wait != TlsResult::Wait::kNone) ec = asio::error::would_block;
  else if (r.closed) ec = asio::error::eof;
  if (!r.error.empty()) spdlog::debug("websocket: tls: {}", r.error);
  return r.bytes;
}

void WebSocketConnection::read_on() {
  inbound_.set(reader_.held());
  if (closing_ || inbound_.held() < kPauseAbove || !InboundBudget::over()) {
    pause_.reset();
    wait_readable();
    return;
  }
  if (!pause_) {
    pause_ = std::make_unique<Pause>(Pause{asio::steady_timer(socket_.get_executor()), std::chrono::steady_clock::now()});
    spdlog::debug("websocket: the server's inbound budget is spent ({} bytes held); reading paused", InboundBudget::total());
  }
  pause_->timer.expires_after(kPauseRecheck);
  pause_->timer.async_wait([self = shared_from_this()](const boost::system::error_code& ec) {
    if (!ec && !self->closed_) self->check_pause();
  });
}

void WebSocketConnection::check_pause() {
  if (pause_ && InboundBudget::over() && std::chrono::steady_clock::now() - pause_->since > kMaxPause) {
    spdlog::info("websocket: paused for {} s over the server's inbound budget; closing (1013)", kMaxPause.count());
    close(kCloseTryAgainLater);
    wait_readable();  // the peer's answer to the close, or its end
    return;
  }
  read_on();
}

bool WebSocketConnection::handle_event(const ws::Event& ev) {
  switch (ev.kind) {
    case ws::Event::kMessage:
      if (listener_) listener_->on_ws_message(*this, ev.binary, ev.payload);
      return !closing_;
    case ws::Event::kPing:
      send_control(ws::Opcode::kPong, std::string(ev.payload));
      return true;
    case ws::Event::kPong:
      return true;
    case ws::Event::kClose:
      close(ws::kCloseNormal);
      return false;
  }
  return true;
}

void WebSocketConnection::send(OutFrame frame) {
  if (closing_ || closed_ || !frame.bytes) return;
  queued_bytes_ += frame.size();
  ++queued_items_;
  queue_.push_back({std::move(frame.bytes), frame.binary ? ws::Opcode::kBinary : ws::Opcode::kText, frame.read_us});
  schedule_flush();
}

void WebSocketConnection::when_written(SentReceipt done) {
  // Once closing, send() drops frames: whatever the receipt covers may not have gone out.
  if (closed_ || closing_) return done(false);
  if (written_items_ == queued_items_) return done(true);
  receipts_.emplace_back(queued_items_, std::move(done));
}

void WebSocketConnection::send_control(ws::Opcode op, std::string payload) {
  if (closing_ || closed_) return;
  // A pong not written yet is replaced rather than joined by another (RFC 6455 5.5.3 allows answering
  // the latest ping only): a peer that pings without reading cannot grow the queue with pongs. One in a
  // write under way (the head of the queue) is not: the latest ping's answer follows it.
  if (op == ws::Opcode::kPong) {
    for (size_t i = inflight_; i < queue_.size(); ++i) {
      Item& item = queue_[i];
      if (item.opcode != ws::Opcode::kPong) continue;
      queued_bytes_ += payload.size() - item.bytes->size();
      item.bytes = std::make_shared<const std::string>(std::move(payload));
      return;
    }
  }
  queued_bytes_ += payload.size();
  ++queued_items_;
  queue_.push_back({std::make_shared<const std::string>(std::move(payload)), op});
  schedule_flush();
}

void WebSocketConnection::close(uint16_t code) {
  if (closing_ || closed_) return;
  std::string payload{static_cast<char>(code >> 8), static_cast<char>(code & 0xff)};
  queued_bytes_ += payload.size();
  ++queued_items_;
  queue_.push_back({std::make_shared<const std::string>(std::move(payload)), ws::Opcode::kClose});
  closing_ = true;
  schedule_flush();
  close_timer_ = std::make_unique<Timer>(socket_.get_executor());
  close_timer_->expires_after(kCloseDeadline);
  close_timer_->async_wait([self = shared_from_this()](const boost::system::error_code& ec) {
    if (ec || self->closed_) return;
    spdlog::info("websocket: the peer read nothing for {} s after the close; connection reset", kCloseDeadline.count());
    self->finish();
  });
}

void WebSocketConnection::schedule_flush() {
  if (flush_scheduled_ || writing_ || closed_) return;
  flush_scheduled_ = true;
  // Frames produced during this loop turn join the same write.
  asio::post(socket_.get_executor(), [self = shared_from_this()] {
    self->flush_scheduled_ = false;
    self->flush();
  });
}

void WebSocketConnection::flush() {
  if (writing_ || closed_ || queue_.empty()) return;
  if (tls_) return flush_tls();
  // Small frames are copied, header and payload, into one buffer: a write of many small messages is one
  // sendmsg (Asio passes at most 64 buffers to a call). A large payload keeps its own buffer. The buffer
  // is this thread's: most writes complete at once, and only one that must wait moves it into the
  // connection (packed_), so that connections neither hold nor keep reallocating 64 KiB each.
  struct Segment {
    bool packed;
    size_t offset, size;  // packed: a range of packed_; else: the item's payload
    size_t item;
  };
  // This thread's buffers, reused: flush() runs to its end before another flush on the thread starts
  // (write_done() may call it again, but only after this call has no more use for them).
  thread_local std::vector<Segment> segments;
  thread_local std::vector<asio::const_buffer> bufs;
  thread_local std::string packed;
  segments.clear();
  bufs.clear();
  packed.clear();
  size_t take = 0, large = 0;
  for (; take < queue_.size() && packed.size() < kPackLimit; ++take) {
    const Item& item = queue_[take];
    bool big = item.bytes->size() >= kCopyLimit;
    if (big && large == kMaxLarge) break;
    bool prefix = prefix_binary_ && item.opcode == ws::Opcode::kBinary;
    uint8_t h[ws::kMaxHeaderSize + 1];
    size_t n = ws::encode_header(h, item.opcode, true, item.bytes->size() + (prefix ? 1 : 0), nullptr);
    if (prefix) h[n++] = 4;
    size_t at = packed.size();
    packed.append(reinterpret_cast<const char*>(h), n);
    if (!big) packed.append(*item.bytes);
    if (!segments.empty() && segments.back().packed) segments.back().size += packed.size() - at;
    else segments.push_back({true, at, packed.size() - at, take});
    if (big) {
      segments.push_back({false, 0, item.bytes->size(), take});
      ++large;
    }
  }
  inflight_ = static_cast<uint32_t>(take);  // (at most kPackLimit / 2 frames)
  auto fill_buffers = [this](const std::string& from) {
    bufs.clear();
    for (const Segment& seg : segments) {
      if (seg.packed) bufs.emplace_back(from.data() + seg.offset, seg.size);
      else bufs.emplace_back(queue_[seg.item].bytes->data(), seg.size);
    }
  };
  fill_buffers(packed);
  writing_ = true;

  // Most writes fit in the socket buffer: try once without waiting, then hand the rest to Asio.
  boost::system::error_code ec;
  size_t written = socket_.write_some(bufs, ec);
  if (ec && ec != asio::error::would_block && ec != asio::error::try_again) {
    writing_ = false;
    finish();
    return;
  }
  size_t total = asio::buffer_size(bufs);
  if (written == total) {
    write_done();
    return;
  }
  // The rest waits for the socket: the packed bytes move into the connection (the buffers are pointed
  // at them anew: a short string's bytes do not move with it).
  packed_.swap(packed);
  fill_buffers(packed_);
  size_t skip = written;
  auto it = bufs.begin();
  while (skip >= it->size()) skip -= (it++)->size();
  std::vector<asio::const_buffer> rest(it, bufs.end());
  rest.front() += skip;
  asio::async_write(socket_, rest, [self = shared_from_this()](const boost::system::error_code& wec, size_t) {
    if (wec) {
      self->writing_ = false;
      self->finish();
      return;
    }
    self->write_done();
  });
}

// Over TLS every frame is copied into one buffer (encryption copies anyway), and the session writes it
// record by record; what the socket does not take now is written when it turns writable.
void WebSocketConnection::flush_tls() {
  packed_.clear();
  size_t take = 0;
  for (; take < queue_.size() && packed_.size() < kPackLimit; ++take) {
    const Item& item = queue_[take];
    bool prefix = prefix_binary_ && item.opcode == ws::Opcode::kBinary;
    uint8_t h[ws::kMaxHeaderSize + 1];
    size_t n = ws::encode_header(h, item.opcode, true, item.bytes->size() + (prefix ? 1 : 0), nullptr);
    if (prefix) h[n++] = 4;
    packed_.append(reinterpret_cast<const char*>(h), n);
    packed_.append(*item.bytes);
  }
  inflight_ = static_cast<uint32_t>(take);  // (at most kPackLimit / 2 frames)
  writing_ = true;
  tls_sent_ = 0;
  write_tls();
}

void WebSocketConnection::write_tls() {
  while (tls_sent_ < packed_.size()) {
    TlsResult r = tls_->write(packed_.data() + tls_sent_, packed_.size() - tls_sent_);
    if (r.closed) {
      if (!r.error.empty()) spdlog::debug("websocket: tls: {}", r.error);
      writing_ = false;
      finish();
      return;
    }
    if (r.wait != TlsResult::Wait::kNone) {
      auto wait = r.wait == TlsResult::Wait::kRead ? tcp::socket::wait_read : tcp::socket::wait_write;
      socket_.async_wait(wait, [self = shared_from_this()](const boost::system::error_code& ec) {
        if (ec) {
          self->writing_ = false;
          self->finish();
          return;
        }
        self->write_tls();
      });
      return;
    }
    tls_sent_ += r.bytes;
  }
  write_done();
}

void WebSocketConnection::write_done() {
  writing_ = false;
  // A write that completed just as the connection finished (its handler was already queued): finish()
  // has settled the counts and the receipts.
  if (closed_) return;
  bool sent_close = false;
  uint32_t now_us = 0;
  for (size_t i = 0; i < inflight_; ++i) {
    const Item& item = queue_[i];
    queued_bytes_ -= item.bytes->size();  // every frame counts, control frames too
    if (item.opcode == ws::Opcode::kClose) sent_close = true;
    if (item.read_us != 0) record_write(item.read_us, now_us ? now_us : (now_us = stamp_now_us()));
  }
  queue_.erase(queue_.begin(), queue_.begin() + static_cast<std::ptrdiff_t>(inflight_));
  written_items_ += inflight_;
  inflight_ = 0;
  if (queue_.empty() && packed_.capacity() > 65536) std::string().swap(packed_);  // an idle connection keeps little
  if (!receipts_.empty()) fire_receipts();
  if (sent_close) {
    // The server closes the TCP connection once its close frame is out (RFC 6455 7.1.1); waiting for
    // the peer's answer would let a silent peer hold the socket forever.
    finish();
    return;
  }
  if (!queue_.empty()) flush();
}

void WebSocketConnection::finish() {
  if (closed_) return;
  closed_ = true;
  closing_ = true;
  boost::system::error_code ec;
  if (close_timer_) close_timer_->cancel();
  if (pause_) pause_->timer.cancel();
  inbound_.set(0);
  if (tls_) tls_->shutdown();
  socket_.close(ec);
  // A write the close cut short keeps its frames until the connection goes (its handler may still run).
  queue_.erase(queue_.begin() + static_cast<std::ptrdiff_t>(inflight_), queue_.end());
  queued_bytes_ = 0;
  auto unsent = std::move(receipts_);
  receipts_.clear();
  for (auto& [at, done] : unsent) done(false);
  if (auto* l = listener_) {
    listener_ = nullptr;
    l->on_ws_closed(*this);
  }
}

void WebSocketConnection::fire_receipts() {
  size_t n = 0;
  while (n < receipts_.size() && receipts_[n].first <= written_items_) ++n;
  if (n == 0) return;
  std::vector<std::pair<uint64_t, SentReceipt>> due(std::make_move_iterator(receipts_.begin()),
                                                    std::make_move_iterator(receipts_.begin() + n));
  receipts_.erase(receipts_.begin(), receipts_.begin() + n);
  for (auto& [at, done] : due) done(true);
}

}  // namespace siomq::net
