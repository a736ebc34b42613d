// Admin proofs of tyo-mq §8.1: HMAC-SHA256 over action, timestamp, nonce and the canonical JSON of the
// command's body, within ±5 minutes, each nonce usable once. What the signed manager commands and the
// authorization decisions check before they do anything.
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

#include "auth/proof_signature.h"
#include "wire/result.h"

namespace siomq::auth {

inline constexpr int64_t kProofWindowMs = 300'000;
inline constexpr int64_t kNonceLifetimeMs = 600'000;  // longer than the window: a replay is always caught

// The largest body a proof may sign: canonicalising is the costly step of a check, and no command needs
// more (a whole settings document of thousands of tokens fits).
inline constexpr size_t kMaxSignedBody = 256 * 1024;

// Nonces that verified, forgotten after kNonceLifetimeMs (§0 row 10). Thread-safe.
class NonceCache {
 public:
  bool used(const std::string& nonce, int64_t now_ms);
  // Records a nonce whose proof verified; false when it was recorded already — checked and recorded
  // under one lock, so two workers verifying the same proof at once cannot both accept it.
  bool record(const std::string& nonce, int64_t now_ms);
  size_t size();

 private:
  void prune(int64_t now_ms);
  std::mutex mu_;
  std::unordered_map<std::string, int64_t> seen_;  // nonce -> when it verified
  int64_t next_prune_ = 0;
};

// A proof's fields, read and checked for everything that costs nothing — form (a 64-hex-digit
// signature), the ±5 minute window, a nonce not used yet — before any canonicalising or HMAC.
struct Proof {
  double timestamp_ms = 0;
  std::string nonce;
  std::string signature;  // 32 raw bytes
};
Result<Proof> read_proof(std::string_view proof_json, int64_t now_ms, NonceCache& nonces);
// Whether `proof` signs `base` (proof_base's text) with `secret`; constant time.
bool signs(const Proof& proof, std::string_view base, std::string_view secret);

// Checks `proof_json` ({timestamp, nonce, signature}; empty when absent) for `action` over `body_json`
// with `secret`. Errors carry code 401 and the reference's messages: "Missing manager proof",
// "Invalid manager proof", "Manager proof nonce was already used". The nonce is remembered only when
// the proof verifies.
Status verify_proof(std::string_view action, std::string_view body_json, std::string_view proof_json,
                    std::string_view secret, int64_t now_ms, NonceCache& nonces);

}  // namespace siomq::auth
