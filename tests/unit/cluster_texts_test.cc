// The cluster's texts in Redis (tyo-mq §10): relayed messages and the shared settings, in both directions,
// as a reference (Node.js tyo-mq) node writes and reads them; and what is refused.
#include <gtest/gtest.h>

#include <string>

#include "cluster/durable_note.h"
#include "cluster/relay_message.h"
#include "cluster/shared_settings.h"
#include "wire/socketio.h"

namespace siomq::cluster {
namespace {

TEST(RelayMessage, EncodesEveryFieldOfTheReferenceShapeAndSplicesRawValues) {
  RelayedMessage m;
  m.node_id = "node-a";
  m.realm = "shop";
  m.event = "placed";
  m.message = R"({"n" : 1.50})";
  m.producer = "orders";
  m.ttl = "30";
  m.to = R"(["x"])";
  m.content_type = "text/plain";
  EXPECT_EQ(encode_relay(m),
            R"({"node_id":"node-a","payload":{"realm":"shop","event":"placed","message":{"n" : 1.50},"producer":"orders",)"
            R"("ttl":30,"guaranteed":false,"enc":null,"to":["x"],"contentType":"text/plain","method":null,)"
            R"("broadcast":null,"group":null}})");
  auto back = decode_relay(encode_relay(m), 1 << 20);
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(back->message, m.message);
  EXPECT_EQ(back->to, m.to);
  EXPECT_EQ(back->ttl, "30");
  EXPECT_EQ(back->content_type, "text/plain");
}

TEST(RelayMessage, ReadsAReferenceMessageWithoutProducerOrTtlAndWithAStringTtl) {
  auto m = decode_relay(R"({"node_id":"ref","payload":{"realm":"default","event":"e","message":"hi","guaranteed":true,)"
                        R"("enc":null,"to":null,"contentType":null,"method":null,"broadcast":null,"group":null}})",
                        4096);
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_FALSE(m->producer);
  EXPECT_EQ(m->ttl, "");
  EXPECT_TRUE(m->guaranteed);
  EXPECT_EQ(m->enc, "");
  auto s = decode_relay(R"({"node_id":"ref","payload":{"realm":"r","event":"e","ttl":"1h","producer":"p",)"
                        R"("method":"broadcast","broadcast":"group","group":"g"}})",
                        4096);
  ASSERT_TRUE(s) << s.error().message;
  EXPECT_EQ(s->ttl, "\"1h\"");
  EXPECT_TRUE(s->broadcast);
  EXPECT_EQ(s->broadcast_scope, "group");
  EXPECT_EQ(s->group, "g");
}

TEST(RelayMessage, BinaryAttachmentsTravelInBase64BesideThePlaceholders) {
  RelayedMessage m;
  m.node_id = "a";
  m.realm = "r";
  m.event = "blob";
  m.message = R"({"data":{"_placeholder":true,"num":0}})";
  m.attachments = {std::string("\x00\x01\xff", 3), ""};
  std::string text = encode_relay(m);
  EXPECT_NE(text.find(R"("attachments":["AAH/",""])"), std::string::npos) << text;
  auto back = decode_relay(text, 1 << 20);
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(back->attachments, m.attachments);
  EXPECT_EQ(back->message, m.message);
  for (const char* list : {R"("x")", "[1]", R"(["not base64!"])", R"(["QQ"])", "{}"}) {
    std::string bad = R"({"node_id":"a","payload":{"realm":"r","event":"e","attachments":)" + std::string(list) + "}}";
    EXPECT_FALSE(decode_relay(bad, 1 << 20)) << list;
  }
  EXPECT_TRUE(decode_relay(R"({"node_id":"a","payload":{"realm":"r","event":"e","attachments":null}})", 1 << 20));
  // Each placeholder must name one of them, as in a client's binary packet (else the subscriber's client
  // would refuse the packet and drop its connection); without attachments a placeholder is plain JSON.
  auto with = [](const std::string& message, const std::string& list) {
    return decode_relay(R"({"node_id":"a","payload":{"realm":"r","event":"e","message":)" + message +
                            R"(,"attachments":)" + list + "}}",
                        1 << 20);
  };
  EXPECT_TRUE(with(R"({"x":{"_placeholder":true,"num":1}})", R"(["","QQ=="])"));
  EXPECT_FALSE(with(R"({"x":{"_placeholder":true,"num":2}})", R"(["","QQ=="])"));
  EXPECT_FALSE(with(R"([{"_placeholder":true,"num":-1}])", R"([""])"));
  EXPECT_FALSE(with(R"({"_placeholder":true})", R"([""])"));
  EXPECT_TRUE(with(R"({"_placeholder":true,"num":9})", "[]"));
  std::string many = "[";
  for (size_t i = 0; i <= sio::kMaxAttachments; ++i) many += i ? ",\"\"" : "\"\"";
  EXPECT_FALSE(with("1", many + "]"));
}

TEST(RelayMessage, RefusesWhatIsNotOne) {
  for (const char* bad : {"", "not json", "[]", R"({"payload":{"realm":"r","event":"e"}})",
                          R"({"node_id":"","payload":{"realm":"r","event":"e"}})", R"({"node_id":"a","payload":5})",
                          R"({"node_id":"a","payload":{"event":"e"}})", R"({"node_id":"a","payload":{"realm":"r","event":5}})",
                          R"({"node_id":"a","payload":{"realm":"r","event":""}})",
                          R"({"node_id":"a","payload":{"realm":"r","event":"e","producer":7}})",
                          R"({"node_id":"a","payload":{"realm":"r","event":"e","method":"broadcast"}})",
                          R"({"node_id":"a","payload":{"realm":"r","event":"e","message":"\ud800"}})",
                          R"({"node_id":"a","payload":{"realm":"r","event":"e"}} trailing)"}) {
    EXPECT_FALSE(decode_relay(bad, 4096)) << bad;
  }
  std::string deep(3000, '[');
  deep += std::string(3000, ']');
  EXPECT_FALSE(decode_relay(R"({"node_id":"a","payload":{"realm":"r","event":"e","message":)" + deep + "}}", 1 << 20));
  EXPECT_FALSE(decode_relay(R"({"node_id":"a","payload":{"realm":"r","event":"e"}})", 20)) << "over the size cap";
}

TEST(SharedSettings, WritesAndReadsTheReferenceEnvelope) {
  std::string text = encode_shared_settings(R"({"auth":{"enabled":true}})", "node-a", 0);
  EXPECT_EQ(text, R"({"settings":{"auth":{"enabled":true}},"node_id":"node-a","updated_at":"1970-01-01T00:00:00.000Z"})");
  auto doc = decode_shared_settings(text);
  ASSERT_TRUE(doc);
  EXPECT_EQ(doc->document, R"({"auth":{"enabled":true}})");
  EXPECT_EQ(doc->node_id, "node-a");
  EXPECT_FALSE(decode_shared_settings(R"({"settings":[1],"node_id":"a"})"));
  EXPECT_FALSE(decode_shared_settings(R"({"node_id":"a"})"));
  EXPECT_FALSE(decode_shared_settings("{"));
  EXPECT_EQ(encode_settings_note(7, "node-b"), R"({"revision":7,"node_id":"node-b"})");
  EXPECT_EQ(settings_note_author(R"({"revision":7,"node_id":"node-b"})"), "node-b");
  EXPECT_FALSE(settings_note_author(R"({"revision":7})"));
  EXPECT_FALSE(settings_note_author("junk"));
}

TEST(DurableNote, MovesAndOffersRoundTripAndBadOnesAreRefused) {
  DurableNote move{DurableNote::Kind::move, "r1", "x", "node-a", "node-b", {}};
  auto back = decode_durable_note(encode_durable_note(move));
  ASSERT_TRUE(back);
  EXPECT_EQ(back->kind, DurableNote::Kind::move);
  EXPECT_EQ(back->realm, "r1");
  EXPECT_EQ(back->consumer, "x");
  EXPECT_EQ(back->from, "node-a");
  EXPECT_EQ(back->to, "node-b");
  DurableNote offer{DurableNote::Kind::adopt, {}, {}, {}, "node-b", "move:Ab_9-z"};
  back = decode_durable_note(encode_durable_note(offer));
  ASSERT_TRUE(back);
  EXPECT_EQ(back->kind, DurableNote::Kind::adopt);
  EXPECT_EQ(back->section, "move:Ab_9-z");
  for (const char* bad : {"", "[]", "{}", R"({"to":"b"})", R"({"adopt":"a b","to":"b"})", R"({"adopt":"","to":"b"})",
                          R"({"adopt":"s","to":""})", R"({"move":"x","realm":"r","to":"b"})",
                          R"({"move":"","realm":"r","from":"a","to":"b"})", R"({"move":1,"realm":"r","from":"a","to":"b"})",
                          "{\"adopt\":\"s\x01\",\"to\":\"b\"}"}) {
    EXPECT_FALSE(decode_durable_note(bad)) << bad;
  }
  EXPECT_FALSE(valid_section(std::string(129, 'a')));
  EXPECT_TRUE(valid_section(std::string(128, 'a')));
}

}  // namespace
}  // namespace siomq::cluster
