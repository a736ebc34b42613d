#include "net/http_stream.h"

#include <boost/asio/post.hpp>
#include <boost/beast/core/error.hpp>

namespace siomq::net {
namespace asio = boost::asio;
namespace beast = boost::beast;
using asio::ip::tcp;

// TLS operations' deadline, armed while an operation is pending (as tcp_stream's): a timer that closes
// the socket, so the pending wait ends and the operation reports beast::error::timeout. Shared with the
// timer's handler, which must not touch a stream destroyed meanwhile.
struct HttpStream::Deadline {
  explicit Deadline(HttpStream& s) : owner(&s), timer(s.get_executor()) {}
  HttpStream* owner;
  asio::steady_timer timer;
  std::chrono::steady_clock::time_point at = std::chrono::steady_clock::time_point::max();
  int pending = 0;  // operations waiting on the socket
  bool armed = false;
  bool expired = false;
};

HttpStream::HttpStream(tcp::socket socket, std::unique_ptr<TlsSession> tls) : tcp_(std::move(socket)), tls_(std::move(tls)) {
  if (tls_) deadline_ = std::make_shared<Deadline>(*this);
}

HttpStream::~HttpStream() = default;

tcp::socket HttpStream::release_socket() {
  if (deadline_) deadline_->timer.cancel();
  return tcp_.release_socket();
}

void HttpStream::expires_after(std::chrono::steady_clock::duration timeout) {
  if (!deadline_) return tcp_.expires_after(timeout);
  deadline_->at = std::chrono::steady_clock::now() + timeout;
  deadline_->expired = false;
  deadline_->armed = false;
  deadline_->timer.cancel();
  if (deadline_->pending > 0) arm_deadline();
}

void HttpStream::expires_never() {
  if (!deadline_) return tcp_.expires_never();
  deadline_->at = std::chrono::steady_clock::time_point::max();
  deadline_->expired = false;
  deadline_->armed = false;
  deadline_->timer.cancel();
}

void HttpStream::arm_deadline() {
  Deadline& d = *deadline_;
  if (d.armed || d.at == std::chrono::steady_clock::time_point::max()) return;
  d.armed = true;
  d.timer.expires_at(d.at);
  d.timer.async_wait([weak = std::weak_ptr<Deadline>(deadline_)](const boost::system::error_code& ec) {
    auto d = weak.lock();
    if (ec || !d || !d->armed) return;
    d->armed = false;
    if (d->pending == 0) return;
    d->expired = true;
    boost::system::error_code ignored;
    d->owner->tcp_.socket().close(ignored);
  });
}

void HttpStream::close() {
  if (tls_) tls_->shutdown();
  if (deadline_) deadline_->timer.cancel();
  boost::system::error_code ec;
  tcp_.socket().shutdown(tcp::socket::shutdown_both, ec);
  tcp_.close();
}

void HttpStream::async_handshake(IoHandler done) {
  if (!tls_ || tls_->handshake_done()) {
    asio::post(get_executor(), [done = std::move(done)]() mutable { std::move(done)(boost::system::error_code{}, 0); });
    return;
  }
  tls_op(Op::kHandshake, {}, std::move(done));
}

void HttpStream::tls_op(Op op, asio::mutable_buffer buffer, IoHandler done) { tls_step(op, buffer, std::move(done), true); }

// Tries the operation; if the TLS session must wait for the socket, waits and tries again. A result
// found while initiating is posted (an Asio operation never completes inside its initiating call).
void HttpStream::tls_step(Op op, asio::mutable_buffer buffer, IoHandler done, bool initiating) {
  auto finish = [this, op, initiating](IoHandler h, boost::system::error_code ec, size_t n) {
    if (op == Op::kWrite && write_copy_.capacity() > 4096) std::string().swap(write_copy_);
    if (!initiating) return std::move(h)(ec, n);
    asio::post(get_executor(), [h = std::move(h), ec, n]() mutable { std::move(h)(ec, n); });
  };
  if (deadline_->expired || !tcp_.socket().is_open())
    return finish(std::move(done),
                  deadline_->expired ? boost::system::error_code(beast::error::timeout)
                                     : boost::system::error_code(asio::error::bad_descriptor),
                  0);
  TlsResult r = op == Op::kRead    ? tls_->read(buffer.data(), buffer.size())
                : op == Op::kWrite ? tls_->write(buffer.data(), buffer.size())
                                   : tls_->handshake();
  if (r.closed) {
    tls_error_ = r.error;
    // A clean end reads as EOF (Beast's end_of_stream); a failure as a reset, with OpenSSL's reason logged
    // by whoever logs the connection's errors at debug level.
    auto ec = r.error.empty() ? boost::system::error_code(asio::error::eof)
                              : boost::system::error_code(asio::error::connection_reset);
    return finish(std::move(done), ec, 0);
  }
  if (r.wait == TlsResult::Wait::kNone) return finish(std::move(done), {}, r.bytes);
  ++deadline_->pending;
  arm_deadline();
  auto wait = r.wait == TlsResult::Wait::kRead ? tcp::socket::wait_read : tcp::socket::wait_write;
  tcp_.socket().async_wait(wait, [this, op, buffer, done = std::move(done)](const boost::system::error_code& ec) mutable {
    // The handler keeps its connection, and so this stream, alive.
    if (--deadline_->pending == 0 && deadline_->armed) {
      deadline_->armed = false;
      deadline_->timer.cancel();
    }
    if (deadline_->expired) return std::move(done)(beast::error::timeout, 0);
    if (ec) return std::move(done)(ec, 0);
    tls_step(op, buffer, std::move(done), false);
  });
}

}  // namespace siomq::net
