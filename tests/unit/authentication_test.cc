// The auth block (§6.1), AUTHENTICATION's decision order (§6.2), token checks (§6.4) and the gate (§6.3).
#include "auth/authentication.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "auth/jwt.h"

namespace siomq::auth {
namespace {

using nlohmann::json;
using Kind = AuthOutcome::Kind;
constexpr int64_t kNow = 1'764'000'000;

AuthConfig config(const char* text) { return parse_auth(json::parse(text)); }

const AuthConfig kConfig = config(R"({
  "enabled": true,
  "tokens": [{"token": "tok-p", "realm": "shop", "role": "producer"}, {"token": "adm", "realm": "*", "role": "admin"}],
  "jwtSecret": "global",
  "external_validators": [{"realm_prefix": "ext-", "auth_url": "http://a"}, {"realmPrefix": "ext-long-", "authUrl": "http://b"}],
  "realms": {
    "default": {"required": false},
    "shop": {"key": "psk", "manager_key": "shop-key"},
    "open": {"required": false, "allow_anonymous": false},
    "keyed": {"required": true, "presharedKey": "k2", "require_acceptance": false},
    "own": {"auth_url": "http://own", "auth_secret": "s"}
  }
})");

AuthRequest req(std::optional<std::string> token, std::optional<std::string> realm = std::nullopt,
                std::optional<std::string> role = std::nullopt, std::optional<std::string> key = std::nullopt) {
  AuthRequest r{std::move(token), std::move(realm), std::move(role), key.has_value(), key};
  return r;
}

TEST(AuthConfig, ReadsEveryKeyAndAlias) {
  EXPECT_TRUE(kConfig.enabled);
  EXPECT_EQ(kConfig.jwt_secret, "global");
  ASSERT_EQ(kConfig.external_validators.size(), 2u);
  EXPECT_EQ(kConfig.external_validators[1].auth_url, "http://b");
  EXPECT_EQ(kConfig.realm("keyed")->key, "k2");
  EXPECT_TRUE(kConfig.has_admin_token());
  EXPECT_EQ(kConfig.tokens[0].role, "producer");
  auto c = config(R"({"enabled":true,"tokens":[{"token":"t"}],"ephemeralRealmTtl":"2h","autoAdminToken":false})");
  EXPECT_EQ(c.tokens[0].realm, "default");
  EXPECT_EQ(c.tokens[0].role, "both");
  EXPECT_EQ(c.ephemeral_realm_ttl_ms, 7200000);
  EXPECT_FALSE(c.auto_admin_token);
  EXPECT_FALSE(parse_auth(json()).enabled);
  for (const char* bad : {R"({"enabled":"yes"})", R"({"tokens":{}})", R"({"tokens":[{"realm":"r"}]})",
                          R"({"realms":{"r":{"required":"no"}}})", R"({"jwt_secret":5})", R"([])",
                          R"({"external_validators":[{"realm_prefix":"x"}]})"})
    EXPECT_THROW(parse_auth(json::parse(bad)), std::runtime_error) << bad;
}

TEST(AuthConfig, RealmPredicates) {
  EXPECT_FALSE(kConfig.auth_required("default"));
  EXPECT_TRUE(kConfig.auth_required("shop"));
  EXPECT_TRUE(kConfig.auth_required("unconfigured"));
  EXPECT_TRUE(kConfig.key_required("shop"));          // a key is configured
  EXPECT_FALSE(kConfig.key_required("unconfigured"));  // nothing configured, no key
  EXPECT_TRUE(kConfig.acceptance_required("shop"));   // follows auth_required
  EXPECT_FALSE(kConfig.acceptance_required("keyed"));
  EXPECT_TRUE(kConfig.anonymous_allowed("default"));
  EXPECT_FALSE(kConfig.anonymous_allowed("open"));
  EXPECT_FALSE(kConfig.anonymous_allowed("shop"));
  AuthConfig off;
  EXPECT_FALSE(off.auth_required("shop"));
  EXPECT_TRUE(role_allows("both", {"producer"}));
  EXPECT_TRUE(role_allows("manager", {"consumer"}));
  EXPECT_FALSE(role_allows("consumer", {"producer"}));
}

TEST(Authenticate, InTheOrderOfSection62) {
  auto a = [](const AuthRequest& r, const std::optional<Grant>& g = std::nullopt) { return authenticate(kConfig, r, g, kNow); };
  // 1. Off: default/both, again and again.
  EXPECT_EQ(authenticate(AuthConfig{}, req("x"), Grant{"default", "both", false}, kNow).grant.realm, "default");
  // 2. Already authenticated, unless the grant was implicit (§0 row 9).
  EXPECT_EQ(a(req("tok-p"), Grant{"shop", "producer", false}).message, "Socket is already authenticated");
  EXPECT_EQ(a(req("tok-p"), Grant{"shop", "producer", true}).kind, Kind::granted);
  // 4.
  EXPECT_EQ(a(req(std::nullopt, "shop", "manager")).message, "Manager role requires manual authorization");
  // 5. An open realm: the requested plain role, else both.
  auto open = a(req(std::nullopt, "open", "consumer"));
  EXPECT_EQ(open.grant.realm, "open");
  EXPECT_EQ(open.grant.role, "consumer");
  EXPECT_EQ(a(req(std::nullopt, "open", "admin")).grant.role, "both");
  // 6. A role or a key: the pre-shared key (strict equality), then acceptance.
  EXPECT_EQ(a(req(std::nullopt, "shop", "consumer", "wrong")).message, "Realm 'shop' requires a valid pre-shared key");
  EXPECT_EQ(a(req(std::nullopt, "shop", "consumer")).code, 401);
  EXPECT_EQ(a(req(std::nullopt, "shop", "consumer", "psk")).kind, Kind::granted);
  EXPECT_EQ(a(req(std::nullopt, "shop", "producer")).message, "Producer must be accepted into realm 'shop'");
  EXPECT_EQ(a(req(std::nullopt, "shop", "producer")).code, 403);
  EXPECT_EQ(a(req(std::nullopt, "keyed", "both", "k2")).grant.role, "both");
  // 7.
  EXPECT_EQ(a(req(std::nullopt, "shop")).message, "Missing authentication token");
  // 8. The token's realm wins; the requested role is ignored.
  auto t = a(req("tok-p", "elsewhere", "consumer"));
  EXPECT_EQ(t.grant.realm, "shop");
  EXPECT_EQ(t.grant.role, "producer");
  EXPECT_EQ(a(req("nope", "shop")).message, "Invalid authentication token");
}

TEST(CheckToken, JwtsThenStaticTokensThenExternalValidators) {
  // The realm's own key, found through the claim; the global secret; a JWT with neither is not valid.
  auto realm_jwt = sign_jwt(R"({"realm":"shop","role":"consumer"})", "shop-key");
  EXPECT_EQ(check_token(kConfig, realm_jwt, std::nullopt, kNow).grant.role, "consumer");
  auto global = sign_jwt(R"({"realm":"r9","role":"both","exp":1764000100})", "global");
  EXPECT_EQ(check_token(kConfig, global, std::nullopt, kNow).grant.realm, "r9");
  EXPECT_EQ(check_token(kConfig, global, std::nullopt, 1764000100).kind, Kind::refused);  // expired
  EXPECT_EQ(check_token(kConfig, sign_jwt(R"({"realm":"shop","role":"both"})", "forged"), std::nullopt, kNow).kind,
            Kind::refused);
  EXPECT_EQ(check_token(kConfig, "adm", std::nullopt, kNow).grant.role, "admin");
  // External: the realm's own url, else the longest prefix, scoped.
  auto own = check_token(kConfig, "opaque", "own", kNow);
  ASSERT_EQ(own.kind, Kind::ask_external);
  EXPECT_EQ(own.external.url, "http://own");
  EXPECT_EQ(own.external.secret, "s");
  auto longest = check_token(kConfig, "opaque", "ext-long-7", kNow);
  EXPECT_EQ(longest.external.url, "http://b");
  EXPECT_EQ(longest.external.scope, ExternalCheck::Scope::prefix);
  EXPECT_EQ(longest.external.scope_realm, "ext-long-");
  EXPECT_EQ(own.external.scope, ExternalCheck::Scope::realm);
  EXPECT_EQ(check_token(kConfig, "opaque", "ext-1", kNow).external.url, "http://a");
  EXPECT_EQ(check_token(kConfig, "opaque", "shop", kNow).kind, Kind::refused);  // no validator applies
  auto with_global = config(R"({"enabled":true,"auth_url":"http://g"})");
  EXPECT_EQ(check_token(with_global, "opaque", std::nullopt, kNow).external.url, "http://g");
}

TEST(Gate, ImplicitGrantsAndRoles) {
  // Unauthenticated in an open realm: both, implicitly.
  auto g = gate(kConfig, std::nullopt, std::nullopt, "PRODUCE", {"producer"});
  EXPECT_TRUE(g.allowed);
  ASSERT_TRUE(g.new_grant);
  EXPECT_EQ(g.new_grant->role, "both");
  EXPECT_TRUE(g.new_grant->implicit);
  // A keyed realm: consumers need the key, producers need acceptance.
  auto c = gate(kConfig, std::nullopt, std::string("keyed"), "CONSUMER", {"consumer"});
  EXPECT_FALSE(c.allowed);
  EXPECT_EQ(c.message, "Authentication required before CONSUMER");
  auto p = gate(kConfig, std::nullopt, std::string("keyed"), "PRODUCER", {"producer"});
  ASSERT_TRUE(p.allowed);
  EXPECT_EQ(p.new_grant->role, "producer");
  auto u = gate(kConfig, std::nullopt, std::string("unconfigured"), "SUBSCRIBE", {"consumer"});
  ASSERT_TRUE(u.allowed);
  EXPECT_EQ(u.new_grant->role, "consumer");
  // Authenticated: roles count only in realms that require auth.
  auto refused = gate(kConfig, Grant{"shop", "consumer", false}, std::nullopt, "PRODUCE", {"producer"});
  EXPECT_FALSE(refused.allowed);
  EXPECT_EQ(refused.code, 403);
  EXPECT_EQ(refused.message, "Role 'consumer' is not allowed to send PRODUCE");
  EXPECT_TRUE(gate(kConfig, Grant{"open", "consumer", false}, std::nullopt, "PRODUCE", {"producer"}).allowed);
  EXPECT_TRUE(gate(kConfig, Grant{"shop", "both", false}, std::nullopt, "ACK", {"consumer"}).allowed);
  EXPECT_TRUE(gate(AuthConfig{}, std::nullopt, std::nullopt, "PRODUCE", {"producer"}).allowed);
}

// Issue 12 item 3: realm "*" mirrors every realm; nothing but an admin credential reaches it.
TEST(RealmStar, OnlyAnAdminCredentialReachesIt) {
  auto a = [](const AuthRequest& r) { return authenticate(kConfig, r, std::nullopt, kNow); };
  for (const char* role : {"consumer", "producer", "both", "admin"}) {
    auto o = a(req(std::nullopt, "*", role));
    EXPECT_EQ(o.kind, Kind::refused) << role;
    EXPECT_EQ(o.code, 403) << role;
  }
  auto open_star = config(R"({"enabled":true,"realms":{"default":{"required":false}}})");
  EXPECT_EQ(authenticate(open_star, req(std::nullopt, "*"), std::nullopt, kNow).kind, Kind::refused);
  auto g = gate(kConfig, std::nullopt, std::string("*"), "SUBSCRIBE", {"consumer"});
  EXPECT_FALSE(g.allowed);
  EXPECT_FALSE(g.new_grant.has_value());
  EXPECT_FALSE(gate(open_star, std::nullopt, std::string("*"), "PRODUCE", {"producer"}).allowed);
  // A JWT (global secret) claiming "*" as a non-admin, or an unknown role, is not trusted.
  EXPECT_EQ(check_token(kConfig, sign_jwt(R"({"realm":"*","role":"consumer"})", "global"), std::nullopt, kNow).kind, Kind::refused);
  EXPECT_EQ(check_token(kConfig, sign_jwt(R"({"realm":"*","role":"admin"})", "global"), std::nullopt, kNow).kind, Kind::granted);
  EXPECT_EQ(check_token(kConfig, sign_jwt(R"({"realm":"r","role":"root"})", "global"), std::nullopt, kNow).kind, Kind::refused);
  // A realm's key does not sign for another realm.
  EXPECT_EQ(check_token(kConfig, sign_jwt(R"({"realm":"shop","role":"admin"})", "shop-key"), std::nullopt, kNow).grant.realm, "shop");
  // Settings cannot declare "*" or a malformed realm, nor give "*" to a non-admin token.
  for (const char* bad : {R"({"realms":{"*":{}}})", R"({"realms":{"":{}}})", R"({"realms":{"a\u0000b":{}}})",
                          R"({"tokens":[{"token":"t","realm":"*","role":"consumer"}]})"})
    EXPECT_THROW(parse_auth(json::parse(bad)), std::runtime_error) << bad;
  EXPECT_THROW(parse_auth(json{{"realms", {{std::string(257, 'r'), json::object()}}}}), std::runtime_error);
}

TEST(RealmNames, MalformedNamesAreRefusedWhereverDeclared) {
  EXPECT_FALSE(bad_realm_name("acme").has_value());
  EXPECT_FALSE(bad_realm_name(std::string(256, 'r')).has_value());
  for (std::string bad : {std::string(), std::string("*"), std::string(257, 'r'), std::string("a\nb"), std::string("a\0b", 3),
                          std::string("\x7f")})
    EXPECT_TRUE(bad_realm_name(bad).has_value()) << bad;
  auto o = authenticate(kConfig, req(std::nullopt, std::string("a\0b", 3), "consumer"), std::nullopt, kNow);
  EXPECT_EQ(o.code, 400);
  EXPECT_FALSE(gate(kConfig, std::nullopt, std::string(300, 'x'), "SUBSCRIBE", {"consumer"}).allowed);
}

// Issue 12 item 4: a realm that requires auth refuses token-less consumers unless it opts in.
TEST(AnonymousConsumers, RefusedWhereTheRealmRequiresAuth) {
  auto c = config(R"({"enabled":true,"tokens":[{"token":"w","realm":"locked","role":"consumer"}],
    "realms":{"locked":{"required":true},"opted":{"required":true,"allowAnonymousConsumers":true},
              "keyed":{"required":true,"key":"k"}}})");
  auto a = [&](const AuthRequest& r) { return authenticate(c, r, std::nullopt, kNow); };
  EXPECT_EQ(a(req(std::nullopt, "locked", "consumer")).message, "Realm 'locked' requires authentication for consumers");
  EXPECT_EQ(a(req(std::nullopt, "locked", "both")).kind, Kind::refused);
  EXPECT_EQ(a(req(std::nullopt, "opted", "consumer")).kind, Kind::granted);
  EXPECT_EQ(a(req(std::nullopt, "keyed", "consumer", "k")).kind, Kind::granted);
  EXPECT_EQ(a(req(std::nullopt, "unconfigured", "consumer")).kind, Kind::granted) << "the reference's rule";
  EXPECT_EQ(a(req("w")).grant.realm, "locked");
  EXPECT_FALSE(gate(c, std::nullopt, std::string("locked"), "SUBSCRIBE", {"consumer"}).allowed);
  EXPECT_TRUE(gate(c, std::nullopt, std::string("opted"), "SUBSCRIBE", {"consumer"}).allowed);
  EXPECT_TRUE(gate(c, std::nullopt, std::string("unconfigured"), "SUBSCRIBE", {"consumer"}).allowed);
}

// Issue 12 item 9: what a validator's answer may grant.
TEST(ExternalGrant, ScopedToTheValidatorAndTheFiveRoles) {
  ExternalCheck own{"u", "", std::string("acme"), ExternalCheck::Scope::realm, "acme"};
  EXPECT_TRUE(external_grant(own, "acme", "consumer").ok());
  EXPECT_FALSE(external_grant(own, "acme-corp", "consumer").ok()) << "not a prefix match";
  EXPECT_FALSE(external_grant(own, "acme", "superuser").ok());
  EXPECT_FALSE(external_grant(own, "*", "admin").ok());
  ExternalCheck prefix{"u", "", std::nullopt, ExternalCheck::Scope::prefix, "ext-"};
  EXPECT_TRUE(external_grant(prefix, "ext-1", "both").ok());
  EXPECT_FALSE(external_grant(prefix, "other", "both").ok());
  EXPECT_FALSE(external_grant(prefix, "*", "admin").ok());
  ExternalCheck global;
  EXPECT_TRUE(external_grant(global, "anything", "producer").ok());
  EXPECT_TRUE(external_grant(global, "*", "admin").ok());
  EXPECT_FALSE(external_grant(global, "*", "consumer").ok());
  EXPECT_FALSE(external_grant(global, "", "consumer").ok());
}

}  // namespace
}  // namespace siomq::auth
