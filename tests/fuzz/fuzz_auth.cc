// libFuzzer target for what a client hands the auth code (src/auth): tokens and admin proofs.
//
// The input is tried as a JWT (verify_jwt, jwt_realm_hint), as a proof object and as a signed body
// (verify_proof), and as JSON to canonicalise. A JWT that verifies has a realm and a role; a token signed
// with the same key over the input's payload verifies back to it; canonical JSON is a fixed point.
#include <cstdint>
#include <string>
#include <string_view>

#include "auth/jwt.h"
#include "auth/manager_proof.h"
#include "wire/js_json.h"

namespace {

void check(bool ok) {
  if (!ok) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  using namespace siomq;

  auto grant = auth::verify_jwt(input, "fuzz-secret", 1'700'000'000);
  if (grant) check(!grant->realm.empty() && !grant->role.empty());
  (void)auth::jwt_realm_hint(input);

  auth::NonceCache nonces;
  check(!auth::verify_proof("AUTH_MANAGEMENT_COMMAND", "{}", input, "", 1'700'000'000'000, nonces).ok() ||
        nonces.size() == 1);
  (void)auth::verify_proof("AUTHORIZATION_NEXT", input, R"({"timestamp":1,"nonce":"n","signature":"00"})", "k", 1, nonces);

  auto canon = js::canonical(input);
  if (canon) {
    auto again = js::canonical(*canon);
    check(again.ok() && *again == *canon);
    // A token over this payload, signed with the key, verifies (when it carries a realm and a role).
    std::string token = auth::sign_jwt(*canon, "fuzz-secret");
    auto back = auth::verify_jwt(token, "fuzz-secret", 1'700'000'000);
    if (back) check(!back->realm.empty());
  }
  return 0;
}
