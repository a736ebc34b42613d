#include "net/tls_session.h"

#include <openssl/err.h>
#include <openssl/ssl.h>

#include <cerrno>
#include <climits>
#include <cstring>

namespace siomq::net {

namespace {
// OpenSSL's reason for the last failure on this thread, for the logs.
std::string last_error(const char* fallback) {
  unsigned long e = ERR_peek_last_error();
  ERR_clear_error();
  if (e == 0) return fallback;
  char text[256];
  ERR_error_string_n(e, text, sizeof text);
  return text;
}
}  // namespace

TlsSession::TlsSession(ssl_st* ssl) : ssl_(ssl) {}

TlsSession::~TlsSession() { SSL_free(ssl_); }

bool TlsSession::handshake_done() const { return SSL_is_init_finished(ssl_) == 1; }

TlsResult TlsSession::handshake() {
  ERR_clear_error();
  int ret = SSL_do_handshake(ssl_);
  if (ret == 1) return {};
  return result_of(ret);
}

TlsResult TlsSession::read(void* data, size_t size) {
  ERR_clear_error();
  size_t n = 0;
  int ret = SSL_read_ex(ssl_, data, size, &n);
  if (ret == 1) {
    TlsResult r;
    r.bytes = n;
    return r;
  }
  return result_of(ret);
}

TlsResult TlsSession::write(const void* data, size_t size) {
  if (size == 0) return {};
  ERR_clear_error();
  size_t n = 0;
  int ret = SSL_write_ex(ssl_, data, size, &n);
  if (ret == 1) {
    TlsResult r;
    r.bytes = n;
    return r;
  }
  return result_of(ret);
}

// Why an operation moved nothing: a wait for the socket, the peer's close, or a failure (fatal: the
// connection is over, and SSL_shutdown must not be called after it).
TlsResult TlsSession::result_of(int ret) {
  TlsResult r;
  switch (SSL_get_error(ssl_, ret)) {
    case SSL_ERROR_WANT_READ:
      r.wait = TlsResult::Wait::kRead;
      return r;
    case SSL_ERROR_WANT_WRITE:
      r.wait = TlsResult::Wait::kWrite;
      return r;
    case SSL_ERROR_ZERO_RETURN:  // close_notify
      r.closed = true;
      return r;
    case SSL_ERROR_SYSCALL: {
      int err = errno;
      failed_ = true;
      r.closed = true;
      // EOF without close_notify is how most clients end a connection: a close, not an error.
      if (ERR_peek_error() == 0 && (err == 0 || err == ECONNRESET || err == EPIPE)) return r;
      r.error = ERR_peek_error() ? last_error("tls: system error") : std::string(std::strerror(err));
      return r;
    }
    default:
      failed_ = true;
      r.closed = true;
      r.error = last_error("tls: protocol error");
      return r;
  }
}

void TlsSession::shutdown() {
  if (failed_ || !handshake_done()) return;
  ERR_clear_error();
  SSL_shutdown(ssl_);  // one try: a peer that does not read gets no close_notify
  ERR_clear_error();
}

}  // namespace siomq::net
