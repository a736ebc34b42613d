// The byte stream under an HTTP connection: plain TCP (Beast's tcp_stream, exactly as before) or TLS
// on the same socket (a TlsSession reading and writing the descriptor, driven by readiness waits). It is
// an Asio AsyncReadStream and AsyncWriteStream, so Beast's HTTP reads and writes run on it unchanged, and
// it keeps tcp_stream's timeout calls: after expires_after, an operation still pending at the deadline
// fails with beast::error::timeout and the socket is closed.
//
// Over TLS, completions are type-erased (one virtual call per operation) and the handshake runs first
// (async_handshake). Threading: the connection's worker only.
#pragma once

#include <boost/asio/any_completion_handler.hpp>
#include <boost/asio/buffer.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <algorithm>
#include <chrono>
#include <memory>
#include <string>
#include <utility>

#include "net/tls_session.h"

namespace siomq::net {

class HttpStream {
 public:
  using executor_type = boost::beast::tcp_stream::executor_type;
  using IoHandler = boost::asio::any_completion_handler<void(boost::system::error_code, std::size_t)>;

  // `tls`: the connection's TLS state, null for plain TCP.
  explicit HttpStream(boost::asio::ip::tcp::socket socket, std::unique_ptr<TlsSession> tls = nullptr);
  ~HttpStream();
  HttpStream(const HttpStream&) = delete;
  HttpStream& operator=(const HttpStream&) = delete;

  executor_type get_executor() { return tcp_.get_executor(); }
  boost::asio::ip::tcp::socket& socket() { return tcp_.socket(); }
  bool is_tls() const { return tls_ != nullptr; }
  // Hands the socket over (to another worker, or to a WebSocket); release_tls() hands its TLS state.
  boost::asio::ip::tcp::socket release_socket();
  std::unique_ptr<TlsSession> release_tls() { return std::move(tls_); }

  void expires_after(std::chrono::steady_clock::duration timeout);
  void expires_never();
  // Sends close_notify when it can without waiting, then closes the socket.
  void close();

  // TLS: runs the server handshake; plain: completes at once. `done(error_code, 0)`.
  void async_handshake(IoHandler done);
  // TLS: OpenSSL's reason for the last failed operation ("" if none).
  const std::string& tls_error() const { return tls_error_; }
  // TLS: reads what has arrived without waiting (for a watch on an idle connection).
  TlsResult read_now(boost::asio::mutable_buffer into) { return tls_->read(into.data(), into.size()); }

  template <class MutableBufferSequence, class ReadHandler>
  void async_read_some(const MutableBufferSequence& buffers, ReadHandler&& handler) {
    if (!tls_) return tcp_.async_read_some(buffers, std::forward<ReadHandler>(handler));
    tls_op(Op::kRead, first_buffer(buffers), IoHandler(std::forward<ReadHandler>(handler)));
  }
  template <class ConstBufferSequence, class WriteHandler>
  void async_write_some(const ConstBufferSequence& buffers, WriteHandler&& handler) {
    if (!tls_) return tcp_.async_write_some(buffers, std::forward<WriteHandler>(handler));
    tls_op(Op::kWrite, linearize(buffers), IoHandler(std::forward<WriteHandler>(handler)));
  }

 private:
  enum class Op { kRead, kWrite, kHandshake };

  template <class MutableBufferSequence>
  static boost::asio::mutable_buffer first_buffer(const MutableBufferSequence& buffers) {
    for (auto it = boost::asio::buffer_sequence_begin(buffers); it != boost::asio::buffer_sequence_end(buffers); ++it) {
      if (boost::asio::mutable_buffer b(*it); b.size() > 0) return b;
    }
    return {};
  }
  // One TLS record's worth of the sequence in one buffer (Beast writes a header and a body as two).
  template <class ConstBufferSequence>
  boost::asio::mutable_buffer linearize(const ConstBufferSequence& buffers) {
    write_copy_.clear();
    for (auto it = boost::asio::buffer_sequence_begin(buffers); it != boost::asio::buffer_sequence_end(buffers); ++it) {
      boost::asio::const_buffer b(*it);
      size_t take = std::min(b.size(), kRecord - write_copy_.size());
      write_copy_.append(static_cast<const char*>(b.data()), take);
      if (write_copy_.size() == kRecord) break;
    }
    return boost::asio::buffer(write_copy_);
  }
  static constexpr size_t kRecord = 16384;

  void tls_op(Op op, boost::asio::mutable_buffer buffer, IoHandler done);
  void tls_step(Op op, boost::asio::mutable_buffer buffer, IoHandler done, bool initiating);
  void arm_deadline();

  boost::beast::tcp_stream tcp_;
  std::unique_ptr<TlsSession> tls_;
  // TLS only: the deadline (tcp_stream keeps its own for plain TCP).
  struct Deadline;
  std::shared_ptr<Deadline> deadline_;
  std::string write_copy_;  // TLS only: the bytes of the write in progress
  std::string tls_error_;
};

}  // namespace siomq::net
