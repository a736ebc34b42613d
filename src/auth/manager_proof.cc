#include "auth/manager_proof.h"

#include <openssl/crypto.h>

#include <charconv>
#include <cmath>
#include <optional>

#include "auth/hmac.h"
#include "wire/durations.h"
#include "wire/js_json.h"
#include "wire/json_spans.h"

namespace siomq::auth {
namespace {

Error missing() { return make_error("Missing manager proof", 401); }
Error invalid() { return make_error("Invalid manager proof", 401); }

std::optional<std::string> unhex(std::string_view text) {
  if (text.size() % 2) return std::nullopt;
  std::string out;
  for (size_t i = 0; i < text.size(); i += 2) {
    unsigned v = 0;
    auto [end, ec] = std::from_chars(text.data() + i, text.data() + i + 2, v, 16);
    if (ec != std::errc() || end != text.data() + i + 2) return std::nullopt;
    out.push_back(static_cast<char>(v));
  }
  return out;
}

}  // namespace

void NonceCache::prune(int64_t now_ms) {
  if (now_ms < next_prune_) return;
  next_prune_ = now_ms + 60'000;
  std::erase_if(seen_, [&](const auto& entry) { return now_ms - entry.second > kNonceLifetimeMs; });
}

bool NonceCache::used(const std::string& nonce, int64_t now_ms) {
  std::lock_guard lock(mu_);
  prune(now_ms);
  auto it = seen_.find(nonce);
  return it != seen_.end() && now_ms - it->second <= kNonceLifetimeMs;
}

bool NonceCache::record(const std::string& nonce, int64_t now_ms) {
  std::lock_guard lock(mu_);
  prune(now_ms);
  auto [it, added] = seen_.emplace(nonce, now_ms);
  if (added) return true;
  if (now_ms - it->second <= kNonceLifetimeMs) return false;
  it->second = now_ms;  // an expired entry the prune has not reached yet
  return true;
}

size_t NonceCache::size() {
  std::lock_guard lock(mu_);
  return seen_.size();
}

Result<Proof> read_proof(std::string_view proof_json, int64_t now_ms, NonceCache& nonces) {
  if (proof_json.empty() || proof_json.front() != '{' || proof_json.size() > 4096) return missing();
  auto members = json_spans::object_members(proof_json);
  if (!members) return missing();
  std::string_view timestamp, nonce_raw, signature_raw;
  for (const auto& m : *members) {  // the last duplicate wins, as in JSON.parse
    if (m.key == "timestamp") timestamp = m.value;
    else if (m.key == "nonce") nonce_raw = m.value;
    else if (m.key == "signature") signature_raw = m.value;
  }
  if (!json_spans::truthy(timestamp) || !json_spans::truthy(nonce_raw) || !json_spans::truthy(signature_raw)) return missing();
  Proof p;
  auto ts = durations::js_number(timestamp);
  if (!ts || std::fabs(static_cast<double>(now_ms) - *ts) > kProofWindowMs) return invalid();
  p.timestamp_ms = *ts;
  // String(nonce): a string as it is, a number as JavaScript writes it; nothing else signs.
  if (nonce_raw.front() == '"') p.nonce = json_spans::unescape(nonce_raw).value_or("");
  else if (auto n = durations::js_number(nonce_raw)) p.nonce = js::number(*n);
  else return invalid();
  if (signature_raw.front() != '"') return invalid();
  auto signature = unhex(json_spans::unescape(signature_raw).value_or(""));
  if (!signature || signature->size() != 32) return invalid();
  p.signature = std::move(*signature);
  if (nonces.used(p.nonce, now_ms)) return make_error("Manager proof nonce was already used", 401);
  return p;
}

bool signs(const Proof& proof, std::string_view base, std::string_view secret) {
  std::string mac = hmac_sha256(secret, base);
  return mac.size() == proof.signature.size() && CRYPTO_memcmp(mac.data(), proof.signature.data(), mac.size()) == 0;
}

Status verify_proof(std::string_view action, std::string_view body_json, std::string_view proof_json,
                    std::string_view secret, int64_t now_ms, NonceCache& nonces) {
  auto proof = read_proof(proof_json, now_ms, nonces);
  if (!proof) return proof.error();
  if (body_json.size() > kMaxSignedBody) return invalid();
  auto base = proof_base(action, proof->timestamp_ms, proof->nonce, body_json);
  if (!base || !signs(*proof, *base, secret)) return invalid();
  if (!nonces.record(proof->nonce, now_ms)) return make_error("Manager proof nonce was already used", 401);
  return Ok{};
}

}  // namespace siomq::auth
