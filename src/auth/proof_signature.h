// The signature of an admin proof (tyo-mq §8.1), shared by the server, which checks proofs
// (auth/manager_proof.h), and the client library, which makes them.
#pragma once

#include <string>
#include <string_view>

#include "wire/result.h"

namespace siomq::auth {

// action "\n" String(timestamp) "\n" nonce "\n" stableStringify(body); `body_json` empty means {}.
Result<std::string> proof_base(std::string_view action, double timestamp_ms, std::string_view nonce,
                               std::string_view body_json);
// Lowercase hex HMAC-SHA256 of the base: what a client puts in `signature`.
Result<std::string> sign_proof(std::string_view action, double timestamp_ms, std::string_view nonce,
                               std::string_view body_json, std::string_view secret);

}  // namespace siomq::auth
