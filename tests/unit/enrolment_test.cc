#include "auth/enrolment.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "auth/hmac.h"

namespace siomq::auth {
namespace {

using nlohmann::json;

TEST(Enrolment, SupersedeLimitDecideAndPublicShape) {
  Enrolment e;
  auto req = [](const char* client, const char* realm = "r") {
    AuthorizationRequest r;
    r.request_id = std::string("id-") + client + "-" + realm;
    r.realm = realm;
    r.role = "both";
    r.client_id = client;
    r.client_name = "n";
    r.client_token = "secret-token";
    return r;
  };
  ASSERT_TRUE(e.submit(req("a"), 2, 1000).ok());
  ASSERT_TRUE(e.submit(req("b"), 2, 1001).ok());
  EXPECT_EQ(e.submit(req("c"), 2, 1002).error().code, 429);
  auto again = req("a");
  again.request_id = "id-a-2";
  ASSERT_TRUE(e.submit(again, 2, 1003).ok());  // supersedes id-a-r, so it fits
  EXPECT_EQ(e.pending_count(), 2u);
  EXPECT_EQ(e.next(std::nullopt)->request_id, "id-b-r");  // the oldest pending
  EXPECT_FALSE(e.next(std::string("other")).has_value());
  EXPECT_EQ(e.decide("id-a-r", true, "both", std::nullopt, 2000).error().code, 404);  // superseded
  auto d = e.decide("id-b-r", false, "both", "no", 2000);
  ASSERT_TRUE(d.ok());
  json pub = public_request(*d);
  EXPECT_EQ(pub["status"], "rejected");
  EXPECT_EQ(pub["decision_reason"], "no");
  EXPECT_EQ(pub["client_token_hash"], sha256_hex("secret-token"));
  EXPECT_EQ(pub.dump().find("secret-token"), std::string::npos);
  EXPECT_EQ(pub["created_at"], "1970-01-01T00:00:01.001Z");
  e.remove_realm("r");
  EXPECT_EQ(e.pending_count(), 0u);
}

// An anonymous client re-filing under one client_id, or under many, can make the server hold only
// what the pending caps allow: superseded and decided requests are not kept.
TEST(Enrolment, WhatIsHeldIsBoundedByThePendingCaps) {
  Enrolment e;
  auto req = [](const std::string& client, const std::string& realm) {
    AuthorizationRequest r;
    r.request_id = "id-" + client + "-" + realm;
    r.realm = realm;
    r.client_id = client;
    r.challenge_response_json = std::string(4000, '1');
    return r;
  };
  for (int i = 0; i < 10000; ++i) ASSERT_TRUE(e.submit(req("same", "r"), 0, i).ok());
  EXPECT_EQ(e.pending_count(), 1u) << "superseded requests are dropped, not kept for an hour";
  for (size_t i = 1; i < kMaxPendingPerRealm; ++i) ASSERT_TRUE(e.submit(req(std::to_string(i), "r"), 0, 1).ok());
  EXPECT_EQ(e.submit(req("one-more", "r"), 0, 1).error().code, 429) << "per realm";
  ASSERT_TRUE(e.submit(req("x", "other-realm"), 0, 1).ok()) << "another realm is not crowded out";
  for (size_t r = 0; e.pending_count() < kDefaultMaxPending; ++r)
    for (size_t i = 0; i < kMaxPendingPerRealm && e.pending_count() < kDefaultMaxPending; ++i)
      ASSERT_TRUE(e.submit(req(std::to_string(i), "realm-" + std::to_string(r)), 0, 1).ok());
  EXPECT_EQ(e.submit(req("late", "fresh-realm"), 0, 1).error().code, 429) << "the server-wide default";
  ASSERT_TRUE(e.decide("id-x-other-realm", true, "both", std::nullopt, 2).ok());
  EXPECT_EQ(e.pending_count(), kDefaultMaxPending - 1) << "a decided request is not kept";
}

}  // namespace
}  // namespace siomq::auth
