// The protocol-neutral gate (surfaces/gate.h): §6.3's admission, the realm cap, grants filed in the
// registry, and §11.1's rate-limit answers, over a recording Session and Reply.
#include "surfaces/gate.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "surface_fakes.h"

namespace siomq::surfaces {
namespace {

using nlohmann::json;
using testing::FakeSession;
using testing::RecordingReply;

constexpr int64_t kNow = 5'000'000;

auth::Snapshot snapshot(const char* text) { return auth::parse_snapshot(json::parse(text)); }

struct GateTest : ::testing::Test {
  broker::Broker broker;
  SessionRegistry sessions;
  GateScope scope{broker, sessions};
  std::shared_ptr<FakeSession> session = std::make_shared<FakeSession>();
};

TEST_F(GateTest, AdmitsEverythingWhileAuthIsOff) {
  auto snap = snapshot(R"({"auth": {"enabled": false}})");
  RecordingReply reply(true);
  EXPECT_TRUE(admit(scope, snap, *session, reply, "PRODUCE", {"producer"}));
  EXPECT_TRUE(reply.record().events.empty());
  EXPECT_TRUE(reply.record().acks.empty());
  EXPECT_FALSE(session->grant);
}

TEST_F(GateTest, RefusalIsAuthFailAndTheAnswer) {
  auto snap = snapshot(R"({"auth": {"enabled": true, "realms": {"default": {"required": true}}}})");
  RecordingReply reply(true);
  EXPECT_FALSE(admit(scope, snap, *session, reply, "SUBSCRIBE", {"consumer", "producer"}));
  ASSERT_EQ(reply.record().events.size(), 1u);
  EXPECT_EQ(reply.record().events[0].first, "AUTH_FAIL");
  EXPECT_EQ(reply.record().events[0].second, R"({"code":401,"message":"Authentication required before SUBSCRIBE"})");
  ASSERT_EQ(reply.record().acks.size(), 1u);
  EXPECT_EQ(reply.record().acks[0], R"([{"ok":false,"code":401,"message":"Authentication required before SUBSCRIBE"}])");
}

TEST_F(GateTest, AnImplicitGrantIsKeptAndFiledUnderItsRealm) {
  auto snap = snapshot(R"({"auth": {"enabled": true, "realms": {"lobby": {"required": false}}}})");
  session->ip = "10.0.0.1";
  sessions.add(session, kNow);
  session->held().pending_realm = "lobby";
  RecordingReply reply(false);
  EXPECT_TRUE(admit(scope, snap, *session, reply, "PING", {}));
  ASSERT_TRUE(session->grant);
  EXPECT_EQ(session->realm(), "lobby");
  EXPECT_TRUE(session->grant->implicit);
  ASSERT_EQ(sessions.in_realm("lobby").size(), 1u);
  EXPECT_TRUE(sessions.in_realm("default").empty());
}

TEST_F(GateTest, TheRealmCapRefusesOnlyNewUnconfiguredRealms) {
  auto snap = snapshot(R"({"auth": {"enabled": true, "realms": {"conf": {"required": false}}},
                           "limits": {"max_realms": 1}})");
  broker.with_realm("busy", [](broker::RealmRegistry&) { return 0; });
  EXPECT_TRUE(over_realm_cap(broker, snap, "fresh"));
  EXPECT_FALSE(over_realm_cap(broker, snap, "busy"));
  EXPECT_FALSE(over_realm_cap(broker, snap, "conf"));

  session->held().pending_realm = "fresh";
  auto open = snapshot(R"({"auth": {"enabled": true, "realms": {"fresh": {"required": false}}},
                           "limits": {"max_realms": 1}})");
  RecordingReply reply(true);
  EXPECT_TRUE(admit(scope, open, *session, reply, "PING", {}));  // configured: always admitted
}

TEST_F(GateTest, RateLimitedIsSentAtMostOnceASecond) {
  RecordingReply reply(true);
  rate_limited(*session, reply, "messages_per_second", 2, kNow);
  rate_limited(*session, reply, "messages_per_second", 2, kNow + 999);
  rate_limited(*session, reply, "bytes_per_second", 3, kNow + 1000);
  ASSERT_EQ(reply.record().events.size(), 2u);
  EXPECT_EQ(reply.record().events[0].first, "RATE_LIMITED");
  EXPECT_EQ(reply.record().events[0].second, R"({"code":429,"reason":"messages_per_second","retry_after":2})");
  EXPECT_EQ(reply.record().events[1].second, R"({"code":429,"reason":"bytes_per_second","retry_after":3})");
  EXPECT_TRUE(reply.record().acks.empty());  // the caller answers the request
}

TEST_F(GateTest, CredentialAttemptsArePacedPerSession) {
  auto snap = snapshot(R"({"limits": {"credential_attempts_per_second": 1, "credential_attempt_burst": 1}})");
  RecordingReply first(true), second(true);
  EXPECT_TRUE(within_credential_rate(snap, *session, first, kNow));
  EXPECT_FALSE(within_credential_rate(snap, *session, second, kNow));
  EXPECT_TRUE(first.record().events.empty());
  ASSERT_EQ(second.record().events.size(), 1u);
  EXPECT_EQ(second.record().events[0].first, "RATE_LIMITED");
  ASSERT_EQ(second.record().acks.size(), 1u);
  EXPECT_EQ(second.record().acks[0], R"([{"ok":false,"code":429,"message":"rate limited: credential_attempts_per_second"}])");
  // Another session has its own bucket.
  FakeSession other("s2");
  RecordingReply third(false);
  EXPECT_TRUE(within_credential_rate(snap, other, third, kNow));
}

TEST_F(GateTest, AuthFailWithoutAnAckIsTheEventAlone) {
  RecordingReply reply(false);
  auth_fail(reply, 403, "no \"way\"");
  ASSERT_EQ(reply.record().events.size(), 1u);
  EXPECT_EQ(reply.record().events[0].second, R"({"code":403,"message":"no \"way\""})");
  EXPECT_TRUE(reply.record().acks.empty());
}

TEST(Session, ItsRealmIsTheGrantsElseDefault) {
  FakeSession s;
  EXPECT_EQ(s.realm(), "default");
  s.grant = auth::Grant{"shop", "producer", false};
  EXPECT_EQ(s.realm(), "shop");
}

}  // namespace
}  // namespace siomq::surfaces
