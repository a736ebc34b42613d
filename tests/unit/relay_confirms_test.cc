// Publisher confirms that wait for other nodes' answers (cluster/relay_confirms.h) and the texts they travel
// in (cluster/relay_message.h: "confirm" in a relayed envelope, RelayAnswer).
#include "cluster/relay_confirms.h"

#include <gtest/gtest.h>

#include <optional>

namespace siomq::cluster {
namespace {

using namespace std::chrono_literals;
using Clock = RelayConfirms::Clock;

struct Outcome {
  size_t stored = 0;
  Status status = Ok{};
};

RelayConfirms::Done into(std::optional<Outcome>& out) {
  return [&out](size_t stored, const Status& s) { out = Outcome{stored, s}; };
}

TEST(RelayConfirms, ConfirmedOnceEveryNodeSentToHasAnsweredWithTheirCopiesSummed) {
  RelayConfirms confirms(3s);
  std::optional<Outcome> out;
  confirms.expect(7, {"b", "c"}, into(out), Clock::now());
  confirms.answer(RelayAnswer{"b", 7, 2, std::nullopt});
  EXPECT_FALSE(out);
  confirms.answer(RelayAnswer{"b", 7, 5, std::nullopt});  // a repeated answer counts once
  confirms.answer(RelayAnswer{"x", 7, 5, std::nullopt});  // a node it was not sent to: ignored
  confirms.answer(RelayAnswer{"c", 8, 5, std::nullopt});  // another message's
  EXPECT_FALSE(out);
  confirms.answer(RelayAnswer{"c", 7, 1, std::nullopt});
  ASSERT_TRUE(out);
  EXPECT_EQ(out->stored, 3u);
  EXPECT_TRUE(out->status.ok());
  EXPECT_EQ(confirms.waiting(), 0u);
}

TEST(RelayConfirms, ANodeThatCouldNotStoreOrDidNotAnswerMakesItAnError) {
  RelayConfirms confirms(3s);
  std::optional<Outcome> failed, late, none;
  const auto t0 = Clock::now();
  confirms.expect(1, {"b"}, into(failed), t0);
  confirms.expect(2, {"b", "c"}, into(late), t0 + 1s);
  confirms.expect(3, {}, into(none), t0);  // sent to no node: at once
  ASSERT_TRUE(none);
  EXPECT_TRUE(none->status.ok());
  confirms.answer(RelayAnswer{"b", 1, 0, std::string("disk full")});
  ASSERT_TRUE(failed);
  EXPECT_EQ(failed->status.error().code, 503);
  EXPECT_NE(failed->status.error().message.find("disk full"), std::string::npos);

  confirms.answer(RelayAnswer{"b", 2, 1, std::nullopt});
  EXPECT_EQ(confirms.next_deadline(), t0 + 4s);
  EXPECT_EQ(confirms.expire(t0 + 3s), 0u);
  EXPECT_EQ(confirms.expire(t0 + 4s), 1u);
  ASSERT_TRUE(late);
  EXPECT_EQ(late->stored, 1u);  // what b stored is told; c's are unknown
  EXPECT_EQ(late->status.error().code, 504);
  EXPECT_NE(late->status.error().message.find("c"), std::string::npos);
  EXPECT_FALSE(confirms.next_deadline());
}

TEST(RelayConfirms, RedisLostAnswersAllAndTheWaitIsBounded) {
  RelayConfirms confirms(3s);
  std::vector<std::optional<Outcome>> outs(3);
  for (uint64_t i = 0; i < 3; ++i) confirms.expect(i + 1, {"b"}, into(outs[i]), Clock::now());
  confirms.fail_all(make_error("gone", 503));
  for (const auto& o : outs) {
    ASSERT_TRUE(o);
    EXPECT_EQ(o->status.error().code, 503);
  }
  for (uint64_t i = 0; i < RelayConfirms::kMaxWaiting; ++i) confirms.expect(i + 1, {"b"}, [](size_t, const Status&) {}, Clock::now());
  std::optional<Outcome> over;
  confirms.expect(RelayConfirms::kMaxWaiting + 1, {"b"}, into(over), Clock::now());
  ASSERT_TRUE(over);
  EXPECT_EQ(over->status.error().code, 503);
}

TEST(RelayAnswerText, RoundTripsAndRefusesWhatIsNotOne) {
  RelayAnswer a{"node-b", 42, 3, std::string("the store is behind")};
  std::string text = encode_relay_answer(a);
  EXPECT_TRUE(is_relay_answer(text));
  auto back = decode_relay_answer(text);
  ASSERT_TRUE(back);
  EXPECT_EQ(back->node_id, "node-b");
  EXPECT_EQ(back->confirm, 42u);
  EXPECT_EQ(back->stored, 3u);
  EXPECT_EQ(back->error, a.error);
  EXPECT_FALSE(decode_relay_answer(encode_relay_answer(RelayAnswer{"b", 1, 0, std::nullopt}))->error);
  for (const char* bad : {R"({"confirmed":0,"node_id":"b","stored":1})", R"({"confirmed":-1,"node_id":"b","stored":1})",
                          R"({"confirmed":1,"node_id":"","stored":1})", R"({"confirmed":1,"stored":1})",
                          R"({"confirmed":1,"node_id":"b","stored":1.5})", R"({"confirmed":1,"node_id":"b","stored":1,"error":3})",
                          R"({"confirmed":18446744073709551616,"node_id":"b","stored":1})", R"({"confirmed":1,"node_id":"b")"}) {
    EXPECT_FALSE(decode_relay_answer(bad)) << bad;
  }
  EXPECT_FALSE(decode_relay_answer(std::string(70000, ' ')));
}

TEST(RelayAnswerText, ARelayedEnvelopeCarriesItsConfirmToken) {
  RelayedMessage m;
  m.node_id = "a";
  m.realm = "default";
  m.event = "e";
  m.confirm = 9;
  auto back = decode_relay(encode_relay(m), 1 << 20);
  ASSERT_TRUE(back);
  EXPECT_EQ(back->confirm, 9u);
  m.confirm = 0;
  EXPECT_EQ(encode_relay(m).find("confirm"), std::string::npos);  // as the reference writes it
  EXPECT_FALSE(decode_relay(R"({"node_id":"a","confirm":"9","payload":{"realm":"r","event":"e"}})", 1 << 20));
  EXPECT_FALSE(decode_relay(R"({"node_id":"a","confirm":0,"payload":{"realm":"r","event":"e"}})", 1 << 20));
}

}  // namespace
}  // namespace siomq::cluster
