// HMAC-SHA256, the primitive behind JWT signatures and admin proofs.
#pragma once

#include <string>
#include <string_view>

namespace siomq::auth {

// The 32 raw bytes of HMAC-SHA256(key, data).
std::string hmac_sha256(std::string_view key, std::string_view data);

}  // namespace siomq::auth
