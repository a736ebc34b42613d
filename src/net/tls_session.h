// One connection's TLS state: an OpenSSL SSL object that reads and writes the connection's socket
// descriptor itself, with non-blocking operations that say what they would wait for. It holds no Asio
// object, so it moves with the descriptor when a connection moves to another worker, and a WebSocket
// keeps it after the upgrade. An idle session holds no record buffers (they are released when empty).
//
// Threading: one thread at a time (the connection's worker). Made by TlsContext::new_session.
#pragma once

#include <cstddef>
#include <string>

struct ssl_st;

namespace siomq::net {

// What an operation did: `bytes` moved; or nothing moved and `wait` says for what to wait before
// calling again; or the connection is over (`closed`, with `error` empty for a clean close or EOF).
struct TlsResult {
  enum class Wait { kNone, kRead, kWrite };
  size_t bytes = 0;
  Wait wait = Wait::kNone;
  bool closed = false;
  std::string error;
};

class TlsSession {
 public:
  // Takes ownership of `ssl`, already attached to the socket's descriptor.
  explicit TlsSession(ssl_st* ssl);
  ~TlsSession();
  TlsSession(const TlsSession&) = delete;
  TlsSession& operator=(const TlsSession&) = delete;

  // The server side of the handshake; done when it returns neither a wait nor closed.
  TlsResult handshake();
  bool handshake_done() const;
  TlsResult read(void* data, size_t size);
  // With partial writes: after a wait, call again with the same bytes from the same offset (the
  // buffer may move).
  TlsResult write(const void* data, size_t size);
  // Sends close_notify if it can without waiting; never waits for the peer's.
  void shutdown();

 private:
  TlsResult result_of(int ret);

  ssl_st* ssl_;
  bool failed_ = false;  // a fatal error: no close_notify after it
};

}  // namespace siomq::net
