// How the server terminates TLS: the `tls` block of the settings (or --tls-cert / --tls-key).
// Read once at start-up; the certificate and key files are read again on SIGHUP (tls_context.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace siomq::net {

struct TlsOptions {
  std::string cert;  // PEM: the certificate, optionally followed by its intermediates
  std::string key;   // PEM: its private key (not encrypted)
  std::string ca;    // PEM, optional: CA certificates that complete the chain served with `cert`
  // The lowest protocol version accepted: "1.2" or "1.3" (TLS 1.0 and 1.1 are never accepted).
  std::string min_version = "1.2";
  // Serve TLS on this second port and keep the main port plain; nullopt: the main port is TLS.
  std::optional<uint16_t> port;
};

}  // namespace siomq::net
