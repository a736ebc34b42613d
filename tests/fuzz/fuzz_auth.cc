// libFuzzer target for what a client hands the auth code (src/auth): tokens and admin proofs; and the web
// console's CONNECT credentials and watch requests (surfaces/console/console_requests.h).
//
// The input is tried as a JWT (verify_jwt, jwt_realm_hint), as a proof object and as a signed body
// (verify_proof), and as JSON to canonicalise. A JWT that verifies has a realm and a role; a token signed
// with the same key over the input's payload verifies back to it; canonical JSON is a fixed point. A console
// grant is an admin's (no realm) or the one realm's manager; a watched realm is a realm name.
#include <cstdint>
#include <string>
#include <string_view>

#include "auth/jwt.h"
#include "auth/manager_proof.h"
#include "surfaces/console/console_requests.h"
#include "wire/js_json.h"

namespace {

void check(bool ok) {
  if (!ok) __builtin_trap();
}

// Auth on, one admin token, one realm with a manager key.
const siomq::auth::Snapshot& console_settings() {
  static const siomq::auth::Snapshot snap = [] {
    siomq::auth::Snapshot s;
    s.auth.enabled = true;
    s.auth.tokens.push_back({"fuzz-admin", "*", "admin", {}, {}});
    s.auth.realms["shop"].manager_key = "fuzz-key";
    return s;
  }();
  return snap;
}

void console_requests(std::string_view input) {
  using namespace siomq;
  auth::NonceCache nonces;
  auto grant = surfaces::console::console_grant(console_settings(), input, nonces, 1'700'000'000'000);
  if (grant) check(grant->admin ? grant->realm.empty() : grant->realm == "shop");
  auto watch = surfaces::console::read_watch(input);
  if (watch && *watch) check(!(*watch)->empty() && !auth::bad_realm_name(**watch));
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
  console_requests(input);
  return 0;
}
