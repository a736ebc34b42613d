#include "auth/proof_signature.h"

#include "auth/hmac.h"
#include "wire/js_json.h"

namespace siomq::auth {

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

}  // namespace siomq::auth
