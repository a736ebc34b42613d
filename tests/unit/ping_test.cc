#include "surfaces/tyo_mq/ping.h"

#include <gtest/gtest.h>

namespace siomq::surfaces {
namespace {

constexpr const char* kTs = "2026-12-02T13:35:15.123Z";

TEST(PingReply, AddsPongAndTimestampToAnObject) {
  EXPECT_EQ(ping_reply(R"(["PING",{"a":1,"b":"x"}])", kTs),
            R"({"a":1,"b":"x","pong":"PONG","timestamp":"2026-12-02T13:35:15.123Z"})");
}

TEST(PingReply, PayloadKeysKeepTheirPlaceButLoseTheirValue) {
  EXPECT_EQ(ping_reply(R"(["PING",{"pong":1,"z":2}])", kTs),
            R"({"pong":"PONG","z":2,"timestamp":"2026-12-02T13:35:15.123Z"})");
}

TEST(PingReply, NoPayloadOrScalarPayloadGivesOnlyPongAndTimestamp) {
  std::string bare = R"({"pong":"PONG","timestamp":"2026-12-02T13:35:15.123Z"})";
  EXPECT_EQ(ping_reply(R"(["PING"])", kTs), bare);
  EXPECT_EQ(ping_reply(R"(["PING",null])", kTs), bare);
  EXPECT_EQ(ping_reply(R"(["PING",42])", kTs), bare);
  EXPECT_EQ(ping_reply(R"(["PING",true])", kTs), bare);
}

TEST(PingReply, ArraysAndStringsSpreadIntoIndexKeys) {
  EXPECT_EQ(ping_reply(R"(["PING",[true,"x"]])", kTs),
            R"({"0":true,"1":"x","pong":"PONG","timestamp":"2026-12-02T13:35:15.123Z"})");
  EXPECT_EQ(ping_reply(R"(["PING","h\u00e9"])", kTs),
            "{\"0\":\"h\",\"1\":\"\xc3\xa9\",\"pong\":\"PONG\",\"timestamp\":\"2026-12-02T13:35:15.123Z\"}");
  // U+1F600 is two UTF-16 code units: two lone surrogates, escaped.
  EXPECT_EQ(ping_reply("[\"PING\",\"\xf0\x9f\x98\x80\"]", kTs),
            R"({"0":"\ud83d","1":"\ude00","pong":"PONG","timestamp":"2026-12-02T13:35:15.123Z"})");
}

TEST(PingReply, IntegerKeysComeFirst) {
  EXPECT_EQ(ping_reply(R"(["PING",{"b":1,"7":2}])", kTs),
            R"({"7":2,"b":1,"pong":"PONG","timestamp":"2026-12-02T13:35:15.123Z"})");
}

TEST(IsoTimestamp, FormatsLikeToIsoString) {
  auto t = std::chrono::system_clock::time_point(std::chrono::milliseconds(1764682515123));
  EXPECT_EQ(iso_timestamp(t), "2025-12-02T13:35:15.123Z");
}

}  // namespace
}  // namespace siomq::surfaces
