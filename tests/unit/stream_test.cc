// A stream's log (broker/stream.h) and the stream and consumer configs (broker/stream_config.h).
#include <gtest/gtest.h>

#include "broker/stream.h"
#include "broker/stream_config.h"

namespace siomq::broker {
namespace {

BusMessagePtr msg(std::string subject, std::string data = "x", int64_t at = 1000) {
  auto m = std::make_shared<BusMessage>();
  m->subject = std::move(subject);
  m->data = std::move(data);
  m->timestamp_ms = at;
  return m;
}

StreamConfig config(std::string json) {
  auto c = parse_stream_config(json);
  EXPECT_TRUE(c.ok()) << (c.ok() ? "" : c.error().message);
  return c.value_or(StreamConfig{});
}

TEST(StreamLog, DiscardOldKeepsTheNewestWithinMaxMsgs) {
  Stream s(config(R"({"name":"S","max_msgs":2})"), 0);
  std::vector<uint64_t> removed;
  for (int i = 0; i < 4; ++i) s.append(msg("S"), "", 1000, removed);
  EXPECT_EQ(removed, (std::vector<uint64_t>{1, 2}));
  EXPECT_EQ(s.state().messages, 2u);
  EXPECT_EQ(s.state().first_seq, 3u);
  EXPECT_EQ(s.state().last_seq, 4u);
}

TEST(StreamLog, DiscardNewRefusesAtTheLimits) {
  Stream s(config(R"({"name":"S","max_msgs":1,"discard":"new","max_msg_size":3})"), 0);
  std::vector<uint64_t> removed;
  EXPECT_TRUE(s.admit("S", 3, 100).ok());
  EXPECT_EQ(s.admit("S", 4, 100).error().code, 413);
  s.append(msg("S"), "", 1000, removed);
  EXPECT_EQ(s.admit("S", 1, 100).error().code, 503);
}

TEST(StreamLog, PerSubjectLimitDropsThatSubjectsOldest) {
  Stream s(config(R"({"name":"S","subjects":["s.*"],"max_msgs_per_subject":1})"), 0);
  std::vector<uint64_t> removed;
  s.append(msg("s.a"), "", 1000, removed);
  s.append(msg("s.b"), "", 1000, removed);
  s.append(msg("s.a"), "", 1000, removed);
  EXPECT_EQ(removed, (std::vector<uint64_t>{1}));
  EXPECT_EQ(s.last_seq_of_subject("s.a"), 3u);
  EXPECT_EQ(s.last_by_subject("s.b")->message->subject, "s.b");
}

TEST(StreamLog, DuplicatesAreFoundWithinTheWindowOnly) {
  Stream s(config(R"({"name":"S","dedup_window_ms":100})"), 0);
  std::vector<uint64_t> removed;
  s.append(msg("S"), "id", 1000, removed);
  EXPECT_EQ(s.duplicate("id", 1050), std::optional<uint64_t>(1));
  EXPECT_EQ(s.duplicate("id", 1100), std::nullopt);
}

TEST(StreamLog, PurgeNeverReusesSeqsAndKeepsTheNewest) {
  Stream s(config(R"({"name":"S","subjects":["s.*"]})"), 0);
  std::vector<uint64_t> removed;
  for (const char* subject : {"s.a", "s.b", "s.a", "s.a"}) s.append(msg(subject), "", 1000, removed);
  EXPECT_EQ(s.purge("s.a", 1), (std::vector<uint64_t>{1, 3}));
  EXPECT_EQ(s.purge("", 0).size(), 2u);
  EXPECT_EQ(s.state().first_seq, 5u);
  EXPECT_EQ(s.state().last_seq, 4u);
  EXPECT_EQ(s.append(msg("s.a"), "", 1000, removed), 5u);
}

TEST(StreamLog, MaxAgeExpiresTheOldest) {
  Stream s(config(R"({"name":"S","max_age_ms":100})"), 0);
  std::vector<uint64_t> removed;
  s.append(msg("S", "a", 1000), "", 1000, removed);
  s.append(msg("S", "b", 1080), "", 1080, removed);
  EXPECT_EQ(s.next_expiry_ms(), std::optional<int64_t>(1100));
  EXPECT_EQ(s.expire(1100), (std::vector<uint64_t>{1}));
  EXPECT_EQ(s.next_expiry_ms(), std::optional<int64_t>(1180));
}

TEST(StreamLog, NextFollowsTheFilter) {
  Stream s(config(R"({"name":"S","subjects":["s.>"]})"), 0);
  std::vector<uint64_t> removed;
  for (const char* subject : {"s.a", "s.b.c", "s.a", "s.b.d"}) s.append(msg(subject), "", 1000, removed);
  EXPECT_EQ(s.next(0, "s.b.>"), std::optional<uint64_t>(2));
  EXPECT_EQ(s.next(2, "s.b.>"), std::optional<uint64_t>(4));
  EXPECT_EQ(s.next(1, "s.a"), std::optional<uint64_t>(3));
  EXPECT_EQ(s.next(3, "s.a"), std::nullopt);
  EXPECT_EQ(s.count_after(0, "s.a"), 2u);
  EXPECT_EQ(s.last_matching("s.b.*"), 4u);
}

TEST(StreamConfig, DefaultsAreFilledAndUnlimitedIsMinusOne) {
  auto a = parse_stream_config(R"({"name":"S","max_msgs":0})");
  auto b = parse_stream_config(R"({"name":"S","max_msgs":-1,"subjects":["S"],"storage":"file"})");
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_TRUE(*a == *b);
  EXPECT_EQ(a->subjects, (std::vector<std::string>{"S"}));
  auto again = parse_stream_config(to_json(*a));
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(*again == *a);
}

TEST(StreamConfig, BadFieldsAreNamed) {
  EXPECT_EQ(parse_stream_config(R"({"name":"a b"})").error().message.substr(0, 4), "name");
  EXPECT_EQ(parse_stream_config(R"({"name":"S","max_bytes":"1"})").error().message.substr(0, 9), "max_bytes");
  EXPECT_EQ(parse_consumer_config(R"({"stream":"S","name":"c","ack_policy":"maybe"})").error().message.substr(0, 10),
            "ack_policy");
  EXPECT_EQ(parse_consumer_config(R"({"stream":"S","name":"c","deliver_group":"g"})").error().message.substr(0, 13),
            "deliver_group");
  auto c = parse_consumer_config(R"({"stream":"S","name":"c","backoff_ms":[5,10],"max_ack_pending":0})");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->max_ack_pending, -1);
  auto again = parse_consumer_config(to_json(*c));
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(*again == *c);
}

}  // namespace
}  // namespace siomq::broker
