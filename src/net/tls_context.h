// The server's TLS configuration: an OpenSSL context built from the certificate and key files, with
// the protocol choices made once (TLS 1.2 or later, AEAD ciphers with forward secrecy for 1.2, no
// renegotiation, no compression, no session tickets or cache). reload() builds a new context from the
// same files and swaps it in: new handshakes use it, established connections keep theirs.
//
// Threading: new_session() from any worker, reload() from the main thread; the swap is under a mutex.
#pragma once

#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>

#include "net/tls_options.h"
#include "net/tls_session.h"

struct ssl_ctx_st;

namespace siomq::net {

// A certificate, key or CA file that cannot be used, at start-up: the process exits with kTlsExitCode.
class TlsError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};
inline constexpr int kTlsExitCode = 4;

class TlsContext {
 public:
  // Loads and checks the files; throws TlsError saying which file and why.
  explicit TlsContext(TlsOptions options);
  ~TlsContext();

  // A new connection's TLS state on socket descriptor `fd`, with the current certificate.
  std::unique_ptr<TlsSession> new_session(int fd) const;
  // Loads the files again; on success the new certificate serves new handshakes and the result is
  // empty, else the current one stays and the result says why.
  std::string reload();
  const TlsOptions& options() const { return options_; }

 private:
  TlsOptions options_;
  mutable std::mutex mu_;
  std::shared_ptr<ssl_ctx_st> ctx_;
};

}  // namespace siomq::net
