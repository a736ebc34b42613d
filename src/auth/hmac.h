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
// Whether two secrets (a token, a pre-shared key) are equal, in time that depends on neither's content
// nor on where they differ: their SHA-256 digests are compared with CRYPTO_memcmp, so even the length
// of the stored secret does not leak.
bool equal_secrets(std::string_view given, std::string_view stored);
// `bytes` random bytes (OpenSSL's generator) as lowercase hex.
std::string random_hex(size_t bytes);

}  // namespace siomq::auth
