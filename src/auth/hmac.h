// HMAC-SHA256 and SHA-256, the primitives behind JWT signatures, admin proofs and token hashes, and
// the hex and random-id helpers around them.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace siomq::auth {

// The 32 raw bytes of HMAC-SHA256(key, data).
std::string hmac_sha256(std::string_view key, std::string_view data);
// Lowercase hex of SHA-256(data): how tokens appear in replies (token_hash) and are compared.
std::string sha256_hex(std::string_view data);
// Lowercase hex of raw bytes.
std::string to_hex(std::string_view bytes);
// `bytes` random bytes (OpenSSL's generator) as lowercase hex.
std::string random_hex(size_t bytes);

}  // namespace siomq::auth
