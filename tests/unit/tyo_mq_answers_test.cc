// How the tyo-mq handlers refuse a request (surfaces/tyo_mq/answers.h) and §11.1's caps on names and
// subscriptions (caps.h), over a recording Session and Reply.
#include "surfaces/tyo_mq/answers.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "surface_fakes.h"
#include "surfaces/tyo_mq/caps.h"
#include "surfaces/tyo_mq/frames.h"
#include "surfaces/tyo_mq/requests.h"

namespace siomq::surfaces {
namespace {

using nlohmann::json;
using testing::FakeSession;
using testing::RecordingReply;

TEST(TyoMqAnswers, AnErrorIsTheErrorEventAndA400Answer) {
  RecordingReply reply(true);
  reply_error(reply, Error{-3, "taken"});
  ASSERT_EQ(reply.record().events.size(), 1u);
  EXPECT_EQ(reply.record().events[0].first, "ERROR");
  EXPECT_EQ(reply.record().events[0].second, error_object(-3, "taken"));
  ASSERT_EQ(reply.record().acks.size(), 1u);
  EXPECT_EQ(reply.record().acks[0], "[" + error_reply(400, "taken") + "]");
}

TEST(TyoMqAnswers, TheBareStringErrorIsSentAsAJsonString) {
  RecordingReply reply(false);
  reply_error(reply, Error{kBareStringError, "bad \"json\""});
  ASSERT_EQ(reply.record().events.size(), 1u);
  EXPECT_EQ(reply.record().events[0].second, R"("bad \"json\"")");
  EXPECT_TRUE(reply.record().acks.empty());
}

TEST(TyoMqAnswers, TheRequestObjectOrTheErrorNamingTheEvent) {
  std::string storage;
  RecordingReply ok(true);
  auto object = request_object_or_error(Request{"PRODUCE", R"(["PRODUCE",{"a":1}])", {}, true, nullptr}, ok, storage);
  ASSERT_TRUE(object);
  EXPECT_EQ(json::parse(*object), json::parse(R"({"a":1})"));
  EXPECT_TRUE(ok.record().events.empty());

  RecordingReply refused(true);
  EXPECT_FALSE(request_object_or_error(Request{"PRODUCE", R"(["PRODUCE"])", {}, true, nullptr}, refused, storage));
  ASSERT_EQ(refused.record().events.size(), 1u);
  EXPECT_EQ(refused.record().events[0].first, "ERROR");
  EXPECT_NE(refused.record().events[0].second.find("PRODUCE: "), std::string::npos);
  EXPECT_EQ(refused.record().acks.size(), 1u);
}

TEST(TyoMqAnswers, WithinRateRefusesPastTheMessageBurstWithRateLimitedAndA429) {
  auto snap = auth::parse_snapshot(json::parse(R"({"limits": {"messages_per_second": 1}})"));
  FakeSession session;
  RecordingReply reply(true);
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(within_rate(snap, session, reply, 10)) << i;  // the burst: 3 × 1
  EXPECT_FALSE(within_rate(snap, session, reply, 10));
  ASSERT_EQ(reply.record().events.size(), 1u);
  EXPECT_EQ(reply.record().events[0].first, "RATE_LIMITED");
  EXPECT_EQ(json::parse(reply.record().events[0].second)["reason"], "messages_per_second");
  ASSERT_EQ(reply.record().acks.size(), 1u);
  EXPECT_EQ(reply.record().acks[0], "[" + error_reply(429, "rate limited: messages_per_second") + "]");
}

TEST(TyoMqAnswers, WithinRateLetsEverythingThroughWithoutBuckets) {
  auth::Snapshot snap;
  FakeSession session;
  RecordingReply reply(true);
  for (int i = 0; i < 100; ++i) EXPECT_TRUE(within_rate(snap, session, reply, 1 << 20));
  EXPECT_TRUE(reply.record().events.empty());
}

TEST(TyoMqCaps, ItemsAreCountedUpToTheSessionsCapThenRefused) {
  FakeSession session;
  RecordingReply reply(true);
  std::set<std::pair<std::string, std::string>> mine;
  Cap cap{2, 0, 0, "per_socket", "per_realm", "total"};
  auto never = [] () -> size_t { ADD_FAILURE() << "an unset cap was asked"; return 0; };
  EXPECT_TRUE(within_cap(session, reply, mine, {"r", "a"}, cap, never, never));
  EXPECT_TRUE(within_cap(session, reply, mine, {"r", "b"}, cap, never, never));
  EXPECT_TRUE(within_cap(session, reply, mine, {"r", "a"}, cap, never, never));  // counted already
  EXPECT_FALSE(within_cap(session, reply, mine, {"r", "c"}, cap, never, never));
  EXPECT_EQ(mine.size(), 2u);
  ASSERT_EQ(reply.record().events.size(), 1u);
  EXPECT_EQ(reply.record().events[0].first, "RATE_LIMITED");
  json body = json::parse(reply.record().events[0].second);
  EXPECT_EQ(body["reason"], "per_socket");
  EXPECT_EQ(body["retry_after"], 60);
  EXPECT_TRUE(reply.record().acks.empty());  // a cap refusal is the event alone
}

TEST(TyoMqCaps, TheRealmsAndTheServersCapsAreAskedOnlyWhenSet) {
  FakeSession session;
  RecordingReply reply(false);
  std::set<std::pair<std::string, std::string>> mine;
  Cap none{0, 0, 0, "s", "r", "t"};
  EXPECT_TRUE(within_cap(session, reply, mine, {"r", "a"}, none, [] { return 0; }, [] { return 0; }));
  EXPECT_TRUE(mine.empty());  // not counted while no cap applies
  Cap realm{0, 5, 0, "s", "realm_full", "t"};
  EXPECT_FALSE(within_cap(session, reply, mine, {"r", "a"}, realm, [] { return 5; }, [] { return 0; }));
  EXPECT_EQ(json::parse(reply.record().events.at(0).second)["reason"], "realm_full");
}

}  // namespace
}  // namespace siomq::surfaces
