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

void NonceCache::remember(const std::string& nonce, int64_t now_ms) {
  std::lock_guard lock(mu_);
  seen_[nonce] = now_ms;
}

size_t NonceCache::size() {
  std::lock_guard lock(mu_);
  return seen_.size();
}

Result<std::string> proof_base(std::string_view action, double timestamp_ms, std::string_view nonce,
                               std::string_view body_json) {
  auto body = js::canonical(body_json.empty() ? std::string_view("{}") : body_json);
  if (!body) return body.error();
  std::string base(action);
  base += "\n" + js::number(timestamp_ms) + "\n";
  base += nonce;
  base += "\n" + *body;
  return base;
}

Result<std::string> sign_proof(std::string_view action, double timestamp_ms, std::string_view nonce,
                               std::string_view body_json, std::string_view secret) {
  auto base = proof_base(action, timestamp_ms, nonce, body_json);
  if (!base) return base.error();
  std::string mac = hmac_sha256(secret, *base);
  return to_hex(mac);
}

Status verify_proof(std::string_view action, std::string_view body_json, std::string_view proof_json,
                    std::string_view secret, int64_t now_ms, NonceCache& nonces) {
  if (proof_json.empty() || proof_json.front() != '{') return missing();
  auto members = json::object_members(proof_json);
  if (!members) return missing();
  std::string_view timestamp, nonce_raw, signature_raw;
  for (const auto& m : *members) {  // the last duplicate wins, as in JSON.parse
    if (m.key == "timestamp") timestamp = m.value;
    else if (m.key == "nonce") nonce_raw = m.value;
    else if (m.key == "signature") signature_raw = m.value;
  }
  if (!json::truthy(timestamp) || !json::truthy(nonce_raw) || !json::truthy(signature_raw)) return missing();
  auto ts = durations::js_number(timestamp);
  if (!ts || std::fabs(static_cast<double>(now_ms) - *ts) > kProofWindowMs) return invalid();
  // String(nonce): a string as it is, a number as JavaScript writes it; nothing else signs.
  std::string nonce;
  if (nonce_raw.front() == '"') nonce = json::unescape(nonce_raw).value_or("");
  else if (auto n = durations::js_number(nonce_raw)) nonce = js::number(*n);
  else return invalid();
  if (nonces.used(nonce, now_ms)) return make_error("Manager proof nonce was already used", 401);
  if (signature_raw.front() != '"') return invalid();
  auto signature = unhex(json::unescape(signature_raw).value_or(""));
  auto expected_hex = sign_proof(action, *ts, nonce, body_json, secret);
  if (!signature || !expected_hex) return invalid();
  auto expected = unhex(*expected_hex);
  if (signature->size() != expected->size() || CRYPTO_memcmp(signature->data(), expected->data(), expected->size()) != 0)
    return invalid();
  nonces.remember(nonce, now_ms);
  return Ok{};
}

}  // namespace siomq::auth
