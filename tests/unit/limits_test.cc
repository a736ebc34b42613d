#include "auth/limits.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <stdexcept>

namespace siomq::auth {
namespace {

using nlohmann::json;

TEST(Limits, ParsedWithOverridesAndOffWithoutABlock) {
  EXPECT_FALSE(parse_limits(json::object()).enabled);
  auto l = parse_limits(json::parse(R"({"trust_proxy":true,"limits":{"messages_per_second":5,"max_connections_per_ip":-1,
      "realms":{"r":{"messages_per_second":50}}}})"));
  EXPECT_TRUE(l.enabled);
  EXPECT_TRUE(l.trust_proxy);
  EXPECT_EQ(l.for_realm("x").messages_per_second, 5);
  EXPECT_EQ(l.for_realm("x").max_connections_per_ip, 0);  // negative: unlimited
  EXPECT_EQ(l.for_realm("r").messages_per_second, 50);
  auto off = parse_limits(json::parse(R"({"limits":{"enabled":false,"messages_per_second":5}})"));
  EXPECT_EQ(off.for_realm("x").messages_per_second, 0);
  // Issue 12: the caps have safe defaults without a block; rates stay off; 0 in a block lifts a cap.
  const LimitValues& d = parse_limits(json::object()).for_realm("x");
  EXPECT_EQ(d.max_subscriptions_per_socket, 1000);
  EXPECT_EQ(d.max_registrations_per_socket, 100);
  EXPECT_EQ(d.credential_attempts_per_second, 10);
  EXPECT_EQ(d.messages_per_second, 0);
  EXPECT_EQ(parse_limits(json::parse(R"({"limits":{"max_subscriptions_per_socket":0}})")).for_realm("x").max_subscriptions_per_socket, 0);
  EXPECT_EQ(l.for_realm("x").max_subscriptions_per_socket, 1000) << "a block without the key keeps the default";
  EXPECT_THROW(parse_limits(json::parse(R"({"limits":{"messages_per_second":"5"}})")), std::runtime_error);
  EXPECT_THROW(parse_limits(json::parse(R"({"limits":{"realms":{"r":1}}})")), std::runtime_error);
}

TEST(TokenBucket, BurstThenRefillAndRetryAfter) {
  TokenBucket b;
  for (int i = 0; i < 6; ++i) EXPECT_EQ(b.take(1, 2, 6, 1000), 0) << i;
  EXPECT_EQ(b.take(1, 2, 6, 1000), 1);     // one token missing at 2/s: 1 s (at least 1)
  EXPECT_EQ(b.take(1, 2, 6, 1500), 0);     // half a second refilled one
  EXPECT_EQ(b.take(10, 2, 6, 1500), 5);    // 10 wanted, 0 there: ceil(10 / 2)
  EXPECT_EQ(b.take(1, 0, 0, 1500), 0);     // rate 0: unlimited
  TokenBucket full;
  EXPECT_EQ(full.take(1, 1, 3, 0), 0);
  EXPECT_EQ(full.take(1, 1, 3, 1'000'000), 0);  // refills up to the burst only
  EXPECT_EQ(full.take(1, 1, 3, 1'000'000), 0);
  EXPECT_EQ(full.take(1, 1, 3, 1'000'000), 0);
  EXPECT_GT(full.take(1, 1, 3, 1'000'000), 0);
}

}  // namespace
}  // namespace siomq::auth
