// Reading HTTP API requests (surfaces/http/api_request.h): path segments, their decoding, bearer tokens
// and POST /api/realms' body.
#include <gtest/gtest.h>

#include "surfaces/http/api_request.h"

namespace siomq::surfaces::http {
namespace {

using Segments = std::vector<std::string_view>;

TEST(HttpApiRequest, PathSegments) {
  EXPECT_EQ(path_segments("/api/stats"), (Segments{"api", "stats"}));
  EXPECT_EQ(path_segments("/health?x=/y#z"), (Segments{"health"}));
  EXPECT_EQ(path_segments("/"), (Segments{""}));
  EXPECT_EQ(path_segments("/api/realms//dlq"), (Segments{"api", "realms", "", "dlq"}));
  EXPECT_FALSE(path_segments("api/stats"));
  EXPECT_FALSE(path_segments(""));
  EXPECT_FALSE(path_segments("/a/b/c/d/e/f/g/h/i"));
  EXPECT_TRUE(path_segments("/a/b/c/d/e/f/g/h"));
}

TEST(HttpApiRequest, DecodeSegment) {
  EXPECT_EQ(decode_segment("a%20b%2Fc+d"), "a b/c+d");
  EXPECT_EQ(decode_segment("%e2%82%ac"), "\xe2\x82\xac");
  EXPECT_FALSE(decode_segment("%"));
  EXPECT_FALSE(decode_segment("%4"));
  EXPECT_FALSE(decode_segment("%zz"));
  EXPECT_FALSE(decode_segment("a%00"));
  EXPECT_FALSE(decode_segment("a%0a"));
  EXPECT_FALSE(decode_segment("a\tb"));
}

TEST(HttpApiRequest, BearerToken) {
  EXPECT_EQ(bearer_token("Bearer abc"), "abc");
  EXPECT_EQ(bearer_token("bEaReR \t abc def  "), "abc def");
  EXPECT_FALSE(bearer_token("Bearer"));
  EXPECT_FALSE(bearer_token("Bearer   "));
  EXPECT_FALSE(bearer_token("Bearerabc"));
  EXPECT_FALSE(bearer_token("Basic abc"));
  EXPECT_FALSE(bearer_token("abc"));
}

TEST(HttpApiRequest, RealmRequest) {
  auto r = parse_realm_request(R"({"realm":"p:x","manager_key":"k","ephemeral":false,"ttl":"2h","other":1})");
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->realm, "p:x");
  EXPECT_EQ(r->manager_key, "k");
  EXPECT_EQ(r->ephemeral, false);
  EXPECT_EQ(*r->ttl, "2h");
  for (const char* bad : {"", "{", "[]", "null", R"({"realm":"x"})", R"({"manager_key":"k"})", R"({"realm":1,"manager_key":"k"})",
                          R"({"realm":"x","manager_key":"k","ephemeral":1})", R"({"realm":"x","manager_key":"k","ttl":-1})",
                          R"({"realm":"x","manager_key":"k","ttl":true})"}) {
    auto e = parse_realm_request(bad);
    ASSERT_FALSE(e) << bad;
    EXPECT_EQ(e.error().code, 400);
  }
  EXPECT_FALSE(parse_realm_request(std::string(kMaxRealmRequestBody + 1, ' ')));
}

}  // namespace
}  // namespace siomq::surfaces::http
