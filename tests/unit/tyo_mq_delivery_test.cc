// The tyo-mq surface's side of the endpoint interface: how a broker::Delivery and a broker::Presence go
// on the wire (surfaces/tyo_mq/delivery.h), and the stored form of a durable subscription
// (surfaces/tyo_mq/stored_subscription.h).
#include <gtest/gtest.h>

#include "surfaces/tyo_mq/delivery.h"
#include "surfaces/tyo_mq/stored_subscription.h"
#include "wire/socketio.h"
#include "fake_endpoint.h"

namespace siomq::surfaces {
namespace {

using broker::DeliveryPolicy;
using broker::Presence;
using broker::SubscribeSpec;

// The Socket.IO event text of one frame list: `42["<event>",<payload>]`.
std::string text_of(const FramesPtr& frames) {
  std::string out;
  for (const auto& f : *frames) out += *f.bytes;
  return out;
}

TEST(TyoMqDelivery, ACopyIsConsumeKeyAndACKModeSplicesTheIdAndAttempt) {
  const std::string payload = R"({"event":"e","message":{"a":1},"from":"p"})";
  broker::Delivery live("p-e", payload, {});
  auto encoded = encode_delivery(live);
  ASSERT_EQ(encoded->frames.size(), 1u);
  EXPECT_EQ(text_of(encoded->frames[0]), R"(42["CONSUME-p-e",{"event":"e","message":{"a":1},"from":"p"}])");

  broker::Delivery acked("p-e", payload, {});
  acked.msg_id = "msg-1";
  acked.attempt = 2;
  EXPECT_EQ(text_of(encode_delivery(acked)->frames[0]),
            R"(42["CONSUME-p-e",{"event":"e","message":{"a":1},"from":"p","msgId":"msg-1","msg_id":"msg-1","delivery_attempt":2}])");
  EXPECT_EQ(with_ack_fields("{}", "x", 1), R"({"msgId":"x","msg_id":"x","delivery_attempt":1})");
  EXPECT_EQ(with_ack_fields("not an object", "x", 1), "not an object");
}

// An ACK-mode copy's frame is the one event_frames makes of with_ack_fields' object: for an empty object,
// with attachments (a binary event), and for a copy long enough to go in chunks (cut from the whole).
TEST(TyoMqDelivery, AnAckModeCopyIsTheStoredObjectWithItsFields) {
  // (A Delivery views its payload and attachments: they outlive it here.)
  auto acked = [](const std::string& payload, const std::vector<std::string>& attachments) {
    broker::Delivery d("p-e", payload, attachments);
    d.msg_id = "msg-\"1\"";
    d.attempt = 3;
    return d;
  };
  for (const std::string& payload : {std::string("{}"), std::string(R"({"a":1})")}) {
    for (const std::vector<std::string>& attachments : {std::vector<std::string>{}, std::vector<std::string>{"\x01\x02"}}) {
      broker::Delivery d = acked(payload, attachments);
      auto encoded = encode_delivery(d);
      ASSERT_EQ(encoded->frames.size(), 1u);
      EXPECT_EQ(text_of(encoded->frames[0]),
                text_of(event_frames("CONSUME-p-e", with_ack_fields(payload, d.msg_id, 3), attachments)));
      EXPECT_EQ(encoded->frames[0]->size(), 1 + attachments.size());
    }
  }
  const std::string long_payload = "{\"pad\":\"" + std::string(kChunkThreshold, 'x') + "\"}";
  const std::vector<std::string> none;
  auto chunked = encode_delivery(acked(long_payload, none));
  ASSERT_EQ(chunked->frames.size(), 2u);
  EXPECT_NE(text_of(chunked->frames[1]).find(R"(\"delivery_attempt\":3})"), std::string::npos);
}

TEST(TyoMqDelivery, ALongCopyGoesInChunksUnlessItIsSentWhole) {
  const std::string payload = "\"" + std::string(kChunkThreshold + 10, 'x') + "\"";
  broker::Delivery d("k", payload, {});
  EXPECT_EQ(encode_delivery(d)->frames.size(), 2u);  // two CONSUME_CHUNK pieces
  EXPECT_NE(text_of(encode_delivery(d)->frames[0]).find("CONSUME_CHUNK"), std::string::npos);
  d.whole = true;
  EXPECT_EQ(encode_delivery(d)->frames.size(), 1u);
}

TEST(TyoMqDelivery, PresenceEventsAsTheReferenceNamesThem) {
  Presence p;
  p.kind = Presence::Kind::connected;
  p.to_id = "pid";
  p.name = "c";
  p.peer_socket = "cs";
  p.peer_id = "cid";
  EXPECT_EQ(presence_event(p), std::make_pair(std::string("CONNECT-pid"),
                                              std::string(R"({"event":"CONNECT","socket":"cs","id":"cid","consumer":"c"})")));
  p.kind = Presence::Kind::disconnected;
  EXPECT_EQ(presence_event(p).second, R"({"event":"DISCONNECT","socket":"cs","consumer":"c"})");
  p.peer_is_producer = true;
  EXPECT_EQ(presence_event(p).second, R"({"event":"DISCONNECT","socket":"cs","producer":"c"})");
  p.kind = Presence::Kind::replaced;
  EXPECT_EQ(presence_event(p), std::make_pair(std::string("ERROR"), std::string(R"("The same producer newly joined")")));
}

TEST(TyoMqDelivery, MessageIdsAsTheReferenceMakesThem) {
  std::string id = new_message_id();
  ASSERT_EQ(id.rfind("msg-", 0), 0u);
  EXPECT_EQ(id.size() - id.rfind('-') - 1, 12u);
  EXPECT_NE(id, new_message_id());
}

// With durable queue shards, the last hex digit is the shard that stored the copy (how its ACK finds it);
// the format stays the reference's.
TEST(TyoMqDelivery, AMessageIdEndsInItsShardsDigit) {
  for (int shard = 0; shard < 16; ++shard) {
    std::string id = new_message_id(shard);
    ASSERT_EQ(id.rfind("msg-", 0), 0u);
    EXPECT_EQ(id.size() - id.rfind('-') - 1, 12u);
    EXPECT_EQ(id.back(), "0123456789abcdef"[shard]) << id;
  }
}

using broker::spec;

TEST(StoredSubscription, RoundTripsAndRefusesPartialRecords) {
  SubscribeSpec s = spec("c\"1", DeliveryPolicy{true, 1234, 7, 55, true});
  s.group = "g";
  s.topic = true;
  auto back = decode_spec(encode_spec(s));
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->consumer, "c\"1");
  EXPECT_EQ(back->group, std::optional<std::string>("g"));
  EXPECT_TRUE(back->topic);
  EXPECT_EQ(back->policy, s.policy);
  EXPECT_FALSE(decode_spec("{\"consumer\":\"c\"}").has_value());
  EXPECT_FALSE(decode_spec("[]").has_value());
  std::string bad = encode_spec(s);
  bad.replace(bad.find("\"max_attempts\":7"), 16, "\"max_attempts\":0");
  EXPECT_FALSE(decode_spec(bad).has_value());
}

TEST(StoredSubscription, TheEngineKeepsTheQueueAndPolicyAndReadsTheRecordBack) {
  SubscribeSpec s = spec("c", DeliveryPolicy{true, 100, 2, 10, false});
  s.consumer_id = "queue-1";
  auto sub = durable_subscription("r", s);
  EXPECT_EQ(sub.key, "p-e");
  EXPECT_EQ(sub.consumer_id, "queue-1");
  EXPECT_EQ(sub.policy, s.policy);
  auto read = read_subscription(store::SubscriptionRecord{sub.realm, sub.key, sub.consumer, sub.spec});
  ASSERT_TRUE(read.has_value());
  EXPECT_EQ(read->consumer_id, "queue-1");
  EXPECT_FALSE(read_subscription(store::SubscriptionRecord{"r", "p-e", "c", "{}"}).has_value());
}

}  // namespace
}  // namespace siomq::surfaces
