#include "auth/jwt.h"

#include <gtest/gtest.h>

#include "wire/base64.h"

namespace siomq::auth {
namespace {

constexpr int64_t kJwtNow = 1'764'000'000;

std::string b64url(std::string_view s) {
  std::string out = base64::encode(s);
  for (char& c : out) c = c == '+' ? '-' : c == '/' ? '_' : c;
  while (!out.empty() && out.back() == '=') out.pop_back();
  return out;
}

TEST(Jwt, AValidTokenGrantsItsRealmAndRole) {
  auto t = sign_jwt(R"({"realm":"r1","role":"Producer","exp":1764000100,"nbf":1763999000})", "k");
  auto g = verify_jwt(t, "k", kJwtNow);
  ASSERT_TRUE(g.ok()) << g.error().message;
  EXPECT_EQ(g->realm, "r1");
  EXPECT_EQ(g->role, "Producer");  // as given
  EXPECT_EQ(jwt_realm_hint(t), "r1");
}

TEST(Jwt, RefusesForgedExpiredAndMalformedTokens) {
  auto bad = [](const std::string& token) {
    auto g = verify_jwt(token, "k", kJwtNow);
    EXPECT_FALSE(g.ok()) << token;
    return g.ok() ? 0 : g.error().code;
  };
  EXPECT_EQ(bad(sign_jwt(R"({"realm":"r","role":"both"})", "other")), 401);             // wrong key
  bad(sign_jwt(R"({"realm":"r","role":"both","exp":1764000000})", "k"));                // exp == now
  bad(sign_jwt(R"({"realm":"r","role":"both","nbf":1764000001})", "k"));                // not yet
  bad(sign_jwt(R"({"role":"both"})", "k"));                                             // no realm
  bad(sign_jwt(R"({"realm":"r","role":5})", "k"));                                      // role not a string
  std::string ok = sign_jwt(R"({"realm":"r","role":"both"})", "k");
  bad(ok + "=");                                                                        // padded signature
  bad(ok.substr(0, ok.rfind('.')));                                                     // two parts
  bad(ok + ".x");                                                                       // four parts
  // alg:none, and HS512 with a valid-looking signature: only HS256 is accepted.
  std::string payload = b64url(R"({"realm":"r","role":"both"})");
  bad(b64url(R"({"alg":"none"})") + "." + payload + ".");
  bad(b64url(R"({"alg":"HS512"})") + "." + payload + "." + ok.substr(ok.rfind('.') + 1));
  bad("not a token");
  bad("");
  EXPECT_EQ(jwt_realm_hint("x.y.z"), std::nullopt);
}

}  // namespace
}  // namespace siomq::auth
