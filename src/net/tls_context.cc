#include "net/tls_context.h"

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <spdlog/spdlog.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace siomq::net {
namespace {

// TLS 1.2's ciphers: ECDHE key exchange (forward secrecy) with AEAD only. TLS 1.3's are all AEAD.
constexpr const char* kTls12Ciphers =
    "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:ECDHE-ECDSA-AES256-GCM-SHA384:"
    "ECDHE-RSA-AES256-GCM-SHA384:ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305";

std::string openssl_reason() {
  unsigned long e = ERR_peek_last_error();
  ERR_clear_error();
  if (e == 0) return "unknown reason";
  const char* reason = ERR_reason_error_string(e);
  return reason ? reason : "unknown reason";
}

// Opens `path` for reading, or says why it cannot be read (missing, a directory, no permission).
struct File {
  std::FILE* f = nullptr;
  ~File() {
    if (f) std::fclose(f);
  }
};
void open_file(File& file, const std::string& path, const char* what) {
  if (path.empty()) throw TlsError(std::string("tls: no ") + what + " file given");
  file.f = std::fopen(path.c_str(), "rb");
  if (!file.f) throw TlsError(std::string("tls: cannot read the ") + what + " " + path + ": " + std::strerror(errno));
  int c = std::fgetc(file.f);
  if (c == EOF) throw TlsError(std::string("tls: the ") + what + " " + path + " is empty or not a file");
  std::ungetc(c, file.f);
}

// A key protected by a passphrase would make OpenSSL ask on the terminal: refuse instead.
int no_passphrase(char*, int, int, void*) { return -1; }

void use_certificate(SSL_CTX* ctx, const TlsOptions& o) {
  File file;
  open_file(file, o.cert, "certificate");
  X509* leaf = PEM_read_X509_AUX(file.f, nullptr, no_passphrase, nullptr);
  if (!leaf) throw TlsError("tls: the certificate " + o.cert + " is not a PEM certificate (" + openssl_reason() + ")");
  int ok = SSL_CTX_use_certificate(ctx, leaf);
  X509_free(leaf);
  if (ok != 1) throw TlsError("tls: the certificate " + o.cert + " cannot be used (" + openssl_reason() + ")");
  // Certificates after the first are its chain (intermediates), served with it.
  while (X509* extra = PEM_read_X509(file.f, nullptr, no_passphrase, nullptr)) {
    if (SSL_CTX_add0_chain_cert(ctx, extra) != 1) {
      X509_free(extra);
      throw TlsError("tls: a chain certificate in " + o.cert + " cannot be used (" + openssl_reason() + ")");
    }
  }
  ERR_clear_error();  // the loop ends on "no start line"
}

void use_key(SSL_CTX* ctx, const TlsOptions& o) {
  File file;
  open_file(file, o.key, "key");
  EVP_PKEY* key = PEM_read_PrivateKey(file.f, nullptr, no_passphrase, nullptr);
  if (!key)
    throw TlsError("tls: the key " + o.key + " is not an unencrypted PEM private key (" + openssl_reason() + ")");
  int ok = SSL_CTX_use_PrivateKey(ctx, key);
  EVP_PKEY_free(key);
  if (ok != 1 || SSL_CTX_check_private_key(ctx) != 1)
    throw TlsError("tls: the key " + o.key + " does not match the certificate " + o.cert + " (" + openssl_reason() + ")");
}

void use_ca(SSL_CTX* ctx, const TlsOptions& o) {
  if (o.ca.empty()) return;
  File file;
  open_file(file, o.ca, "CA file");  // a clear message for a missing file; OpenSSL reads it itself
  if (SSL_CTX_load_verify_locations(ctx, o.ca.c_str(), nullptr) != 1)
    throw TlsError("tls: the CA file " + o.ca + " is not PEM certificates (" + openssl_reason() + ")");
}

// A context with our protocol choices and the files loaded; throws TlsError.
std::shared_ptr<SSL_CTX> build(const TlsOptions& o) {
  std::shared_ptr<SSL_CTX> ctx(SSL_CTX_new(TLS_server_method()), SSL_CTX_free);
  if (!ctx) throw TlsError("tls: cannot make a TLS context (" + openssl_reason() + ")");
  SSL_CTX* c = ctx.get();
  int min = o.min_version == "1.3" ? TLS1_3_VERSION : TLS1_2_VERSION;
  SSL_CTX_set_min_proto_version(c, min);
  // No renegotiation (a client could make the server redo handshakes at will), no compression (CRIME),
  // no session tickets or cache: every connection pays a full handshake, and nothing grows with them.
  // A peer's EOF without close_notify ends the connection like close_notify (HTTP and WebSocket frame
  // their own messages, so a truncation cannot pass for a whole one).
  SSL_CTX_set_options(c, SSL_OP_NO_RENEGOTIATION | SSL_OP_NO_COMPRESSION | SSL_OP_NO_TICKET |
                             SSL_OP_CIPHER_SERVER_PREFERENCE | SSL_OP_IGNORE_UNEXPECTED_EOF);
  SSL_CTX_set_num_tickets(c, 0);
  SSL_CTX_set_session_cache_mode(c, SSL_SESS_CACHE_OFF);
  if (SSL_CTX_set_cipher_list(c, kTls12Ciphers) != 1)
    throw TlsError("tls: the cipher list is refused (" + openssl_reason() + ")");
  // Partial writes and moving buffers suit non-blocking writes; record buffers are freed when empty
  // (an idle connection holds none); read-ahead reads whole socket buffers, not 5 bytes then a record.
  SSL_CTX_set_mode(c, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER | SSL_MODE_RELEASE_BUFFERS);
  SSL_CTX_set_read_ahead(c, 1);
  SSL_CTX_set_default_passwd_cb(c, no_passphrase);
  use_certificate(c, o);
  use_key(c, o);
  use_ca(c, o);
  return ctx;
}

// "subject, serial, valid until" of the context's certificate, for the log.
std::string describe(SSL_CTX* ctx) {
  X509* cert = SSL_CTX_get0_certificate(ctx);
  if (!cert) return "?";
  char subject[256];
  X509_NAME_oneline(X509_get_subject_name(cert), subject, sizeof subject);
  std::string out = subject;
  if (BIGNUM* serial = ASN1_INTEGER_to_BN(X509_get0_serialNumber(cert), nullptr)) {
    if (char* hex = BN_bn2hex(serial)) {
      out += ", serial ";
      out += hex;
      OPENSSL_free(hex);
    }
    BN_free(serial);
  }
  if (BIO* bio = BIO_new(BIO_s_mem())) {
    if (ASN1_TIME_print(bio, X509_get0_notAfter(cert)) == 1) {
      char* text = nullptr;
      long n = BIO_get_mem_data(bio, &text);
      out += ", valid until ";
      out.append(text, static_cast<size_t>(n));
    }
    BIO_free(bio);
  }
  return out;
}

}  // namespace

TlsContext::TlsContext(TlsOptions options) : options_(std::move(options)) {
  if (options_.min_version != "1.2" && options_.min_version != "1.3")
    throw TlsError("tls.min_version must be \"1.2\" or \"1.3\", not \"" + options_.min_version + "\"");
  ctx_ = build(options_);
  spdlog::info("tls: certificate {}", describe(ctx_.get()));
}

TlsContext::~TlsContext() = default;

std::unique_ptr<TlsSession> TlsContext::new_session(int fd) const {
  std::shared_ptr<SSL_CTX> ctx;
  {
    std::lock_guard lock(mu_);
    ctx = ctx_;
  }
  // The SSL object holds its own reference to the context: a reload does not pull it away.
  SSL* ssl = SSL_new(ctx.get());
  if (!ssl) return nullptr;
  if (SSL_set_fd(ssl, fd) != 1) {
    SSL_free(ssl);
    ERR_clear_error();
    return nullptr;
  }
  SSL_set_accept_state(ssl);
  return std::make_unique<TlsSession>(ssl);
}

std::string TlsContext::reload() {
  std::shared_ptr<SSL_CTX> next;
  try {
    next = build(options_);
  } catch (const TlsError& e) {
    return e.what();
  }
  std::string what = describe(next.get());
  {
    std::lock_guard lock(mu_);
    ctx_.swap(next);
  }
  spdlog::info("tls: reloaded; new connections get the certificate {}", what);
  return {};
}

}  // namespace siomq::net
