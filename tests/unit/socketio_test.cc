#include "wire/socketio.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

namespace siomq::sio {
namespace {

using namespace std::string_literals;

// Runs a packet's text and attachments through a fresh Decoder; the packet, or the first error.
Result<Packet> decode_all(std::string_view text, const std::vector<std::string>& attachments = {}) {
  Decoder d;
  auto r = d.feed_text(text);
  if (!r) return r.error();
  if (r->has_value()) {
    if (!attachments.empty()) return make_error("test: packet completed before its attachments");
    return std::move(**r);
  }
  for (size_t i = 0; i < attachments.size(); ++i) {
    auto b = d.feed_binary(attachments[i]);
    if (!b) return b.error();
    if (b->has_value()) {
      if (i + 1 != attachments.size()) return make_error("test: packet completed early");
      return std::move(**b);
    }
  }
  return make_error("test: packet still incomplete");
}

// Builds a packet field by field, so tests do not depend on the order of Packet's members.
Packet make_packet(PacketType type, std::string nsp, std::optional<uint64_t> id, std::string data,
                   size_t attachment_count = 0, std::vector<std::string> attachments = {}) {
  Packet p;
  p.type = type;
  p.nsp = std::move(nsp);
  p.id = id;
  p.data = std::move(data);
  p.attachment_count = attachment_count;
  p.attachments = std::move(attachments);
  return p;
}

void expect_error(std::string_view text, const std::vector<std::string>& attachments = {}) {
  auto r = decode_all(text, attachments);
  EXPECT_FALSE(r.ok()) << "accepted: " << text;
}

// ---- decode_text: the header fields ----

TEST(SocketIoDecodeText, ParsesConnectWithoutPayload) {
  auto p = decode_text("0");
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->type, PacketType::kConnect);
  EXPECT_EQ(p->nsp, "/");
  EXPECT_FALSE(p->id.has_value());
  EXPECT_EQ(p->data, "");
  EXPECT_EQ(p->attachment_count, 0u);
}

TEST(SocketIoDecodeText, ParsesNamespaceTerminatedByComma) {
  auto p = decode_text("2/chat,[\"a\"]");
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->nsp, "/chat");
  EXPECT_EQ(p->data, "[\"a\"]");
}

TEST(SocketIoDecodeText, ParsesNamespaceRunningToTheEnd) {
  auto p = decode_text("1/chat");
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->type, PacketType::kDisconnect);
  EXPECT_EQ(p->nsp, "/chat");
  EXPECT_EQ(p->data, "");
}

TEST(SocketIoDecodeText, ParsesNestedNamespacePath) {
  auto p = decode_text("0/a/b-c_d,{}");
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->nsp, "/a/b-c_d");
  EXPECT_EQ(p->data, "{}");
}

TEST(SocketIoDecodeText, ParsesAckIdWithAndWithoutNamespace) {
  auto a = decode_text("212[\"x\"]");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->nsp, "/");
  ASSERT_TRUE(a->id.has_value());
  EXPECT_EQ(*a->id, 12u);
  EXPECT_EQ(a->data, "[\"x\"]");

  auto b = decode_text("3/chat,0[]");
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->nsp, "/chat");
  ASSERT_TRUE(b->id.has_value());
  EXPECT_EQ(*b->id, 0u);
  EXPECT_EQ(b->data, "[]");
}

TEST(SocketIoDecodeText, AcceptsFifteenDigitAckId) {
  auto p = decode_text("3999999999999999[]");
  ASSERT_TRUE(p.ok());
  ASSERT_TRUE(p->id.has_value());
  EXPECT_EQ(*p->id, 999999999999999u);
}

TEST(SocketIoDecodeText, RejectsAckIdTooLong) {
  EXPECT_FALSE(decode_text("31234567890123456[]").ok());
  EXPECT_FALSE(decode_text("2/chat,1234567890123456[\"a\"]").ok());
}

TEST(SocketIoDecodeText, ParsesAttachmentCount) {
  auto p = decode_text("52-/chat,3[\"up\"]");
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->type, PacketType::kBinaryEvent);
  EXPECT_EQ(p->attachment_count, 2u);
  EXPECT_EQ(p->nsp, "/chat");
  ASSERT_TRUE(p->id.has_value());
  EXPECT_EQ(*p->id, 3u);
  EXPECT_TRUE(p->attachments.empty());
}

TEST(SocketIoDecodeText, RejectsEmptyAndUnknownType) {
  EXPECT_FALSE(decode_text("").ok());
  EXPECT_FALSE(decode_text("7[\"a\"]").ok());
  EXPECT_FALSE(decode_text("9").ok());
  EXPECT_FALSE(decode_text("/").ok());
  EXPECT_FALSE(decode_text("x").ok());
  EXPECT_FALSE(decode_text("\xff").ok());
}

TEST(SocketIoDecodeText, RejectsMalformedAttachmentCount) {
  EXPECT_FALSE(decode_text("5").ok());             // nothing after the type
  EXPECT_FALSE(decode_text("5-[\"a\"]").ok());     // no digits
  EXPECT_FALSE(decode_text("51[\"a\"]").ok());     // no dash
  EXPECT_FALSE(decode_text("51").ok());            // digits run to the end
  EXPECT_FALSE(decode_text("6a-[]").ok());
  EXPECT_FALSE(decode_text("51234567-[\"a\"]").ok());  // seven digits
}

TEST(SocketIoDecodeText, RejectsTooManyAttachments) {
  EXPECT_TRUE(decode_text("510000-[\"a\"]").ok());
  EXPECT_FALSE(decode_text("510001-[\"a\"]").ok());
  EXPECT_FALSE(decode_text("6999999-[]").ok());
}

// ---- all seven packet types through the Decoder ----

TEST(SocketIoDecoder, Connect) {
  auto p = decode_all("0/admin,{\"token\":\"abc\"}");
  ASSERT_TRUE(p.ok()) << p.error().message;
  EXPECT_EQ(p->type, PacketType::kConnect);
  EXPECT_EQ(p->nsp, "/admin");
  EXPECT_EQ(p->data, "{\"token\":\"abc\"}");
  EXPECT_TRUE(decode_all("0").ok());
  EXPECT_TRUE(decode_all("0/chat,").ok());
}

TEST(SocketIoDecoder, Disconnect) {
  auto p = decode_all("1/chat,");
  ASSERT_TRUE(p.ok()) << p.error().message;
  EXPECT_EQ(p->type, PacketType::kDisconnect);
  EXPECT_EQ(p->nsp, "/chat");
  EXPECT_TRUE(decode_all("1").ok());
}

TEST(SocketIoDecoder, Event) {
  auto p = decode_all("2[\"hello\",{\"a\":1}]");
  ASSERT_TRUE(p.ok()) << p.error().message;
  EXPECT_EQ(p->type, PacketType::kEvent);
  EXPECT_EQ(p->data, "[\"hello\",{\"a\":1}]");
  EXPECT_EQ(event_name(*p), "hello");
  auto with_ack = decode_all("2/chat,12[\"msg\",\"x\"]");
  ASSERT_TRUE(with_ack.ok());
  EXPECT_EQ(*with_ack->id, 12u);
  EXPECT_EQ(event_name(*with_ack), "msg");
}

TEST(SocketIoDecoder, Ack) {
  auto p = decode_all("3/chat,7[\"ok\",1]");
  ASSERT_TRUE(p.ok()) << p.error().message;
  EXPECT_EQ(p->type, PacketType::kAck);
  EXPECT_EQ(*p->id, 7u);
  EXPECT_TRUE(decode_all("37[]").ok());
}

TEST(SocketIoDecoder, ConnectError) {
  auto p = decode_all("4{\"message\":\"Not authorized\"}");
  ASSERT_TRUE(p.ok()) << p.error().message;
  EXPECT_EQ(p->type, PacketType::kConnectError);
  EXPECT_TRUE(decode_all("4/chat,\"Invalid namespace\"").ok());  // v2 clients send a string
}

TEST(SocketIoDecoder, BinaryEventWithAttachmentsAtAnyDepth) {
  // socket.io-parser 4.x encode of emit("up", {f: Buffer[1,2], l: [Buffer[3]]}) with ack id 3 on /chat.
  const std::string text =
      "52-/chat,3[\"up\",{\"f\":{\"_placeholder\":true,\"num\":0},\"l\":[{\"_placeholder\":true,\"num\":1}]}]";
  Decoder d;
  auto first = d.feed_text(text);
  ASSERT_TRUE(first.ok()) << first.error().message;
  EXPECT_FALSE(first->has_value());
  EXPECT_TRUE(d.awaiting_attachments());
  auto second = d.feed_binary("\x01\x02"s);
  ASSERT_TRUE(second.ok());
  EXPECT_FALSE(second->has_value());
  EXPECT_TRUE(d.awaiting_attachments());
  auto third = d.feed_binary("\x03"s);
  ASSERT_TRUE(third.ok()) << third.error().message;
  ASSERT_TRUE(third->has_value());
  EXPECT_FALSE(d.awaiting_attachments());
  const Packet& p = **third;
  EXPECT_EQ(p.type, PacketType::kBinaryEvent);
  EXPECT_EQ(p.nsp, "/chat");
  EXPECT_EQ(*p.id, 3u);
  EXPECT_EQ(p.attachment_count, 2u);
  ASSERT_EQ(p.attachments.size(), 2u);
  EXPECT_EQ(p.attachments[0], "\x01\x02"s);
  EXPECT_EQ(p.attachments[1], "\x03"s);
  EXPECT_EQ(event_name(p), "up");
}

TEST(SocketIoDecoder, PlaceholderDeepInsideNesting) {
  auto p = decode_all("51-[\"e\",{\"a\":[[{\"b\":{\"c\":[{\"_placeholder\":true,\"num\":0}]}}]]}]", {"zz"});
  ASSERT_TRUE(p.ok()) << p.error().message;
  EXPECT_EQ(p->attachments.size(), 1u);
  expect_error("51-[\"e\",{\"a\":[[{\"b\":{\"c\":[{\"_placeholder\":true,\"num\":1}]}}]]}]", {"zz"});
}

TEST(SocketIoDecoder, BinaryAck) {
  auto p = decode_all("61-7[{\"_placeholder\":true,\"num\":0}]", {"\x09"});
  ASSERT_TRUE(p.ok()) << p.error().message;
  EXPECT_EQ(p->type, PacketType::kBinaryAck);
  EXPECT_EQ(*p->id, 7u);
  ASSERT_EQ(p->attachments.size(), 1u);
  EXPECT_EQ(p->attachments[0], "\x09");
}

TEST(SocketIoDecoder, BinaryTypeWithZeroAttachmentsCompletesAtOnce) {
  Decoder d;
  auto r = d.feed_text("50-[\"a\"]");
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_TRUE(r->has_value());
  EXPECT_EQ((*r)->type, PacketType::kBinaryEvent);
  EXPECT_FALSE(d.awaiting_attachments());
}

TEST(SocketIoDecoder, AttachmentsMayBeEmptyAndArbitraryBytes) {
  auto p = decode_all("52-[\"e\",{\"_placeholder\":true,\"num\":1},{\"_placeholder\":true,\"num\":0}]",
                      {"", "\x00\xff\x1e"s});
  ASSERT_TRUE(p.ok()) << p.error().message;
  EXPECT_EQ(p->attachments[0], "");
  EXPECT_EQ(p->attachments[1], "\x00\xff\x1e"s);
}

TEST(SocketIoDecoder, AcceptsTextAgainAfterABinaryPacketCompletes) {
  Decoder d;
  ASSERT_TRUE(d.feed_text("51-[\"e\",{\"_placeholder\":true,\"num\":0}]").ok());
  auto done = d.feed_binary("x");
  ASSERT_TRUE(done.ok());
  ASSERT_TRUE(done->has_value());
  auto next = d.feed_text("2[\"again\"]");
  ASSERT_TRUE(next.ok()) << next.error().message;
  ASSERT_TRUE(next->has_value());
  EXPECT_EQ(event_name(**next), "again");
}

TEST(SocketIoDecoder, FillsEventNameForEvents) {
  auto text = decode_all("2/chat,1[\"chat message\",\"hi\"]");
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(text->event, "chat message");
  auto escaped = decode_all("2[\"a\\\"b\\u00e9\"]");
  ASSERT_TRUE(escaped.ok());
  EXPECT_EQ(escaped->event, "a\"b\xc3\xa9");
  auto binary = decode_all("51-[\"upload\",{\"_placeholder\":true,\"num\":0}]", {"x"});
  ASSERT_TRUE(binary.ok());
  EXPECT_EQ(binary->event, "upload");
  auto ack = decode_all("31[\"not an event\"]");
  ASSERT_TRUE(ack.ok());
  EXPECT_EQ(ack->event, "");
}

// ---- placeholders ----

TEST(SocketIoPlaceholders, RejectsNumOutOfRange) {
  expect_error("51-[\"e\",{\"_placeholder\":true,\"num\":1}]", {"a"});
  expect_error("52-[\"e\",{\"_placeholder\":true,\"num\":2}]", {"a", "b"});
  expect_error("51-[\"e\",{\"_placeholder\":true,\"num\":18446744073709551615}]", {"a"});
  expect_error("51-[\"e\",{\"_placeholder\":true,\"num\":1e300}]", {"a"});
  expect_error("50-[\"e\",{\"_placeholder\":true,\"num\":0}]");
}

TEST(SocketIoPlaceholders, RejectsNegativeNum) {
  expect_error("51-[\"e\",{\"_placeholder\":true,\"num\":-1}]", {"a"});
  expect_error("51-[\"e\",{\"_placeholder\":true,\"num\":-0.5}]", {"a"});
}

TEST(SocketIoPlaceholders, RejectsNonIntegerNum) {
  expect_error("52-[\"e\",{\"_placeholder\":true,\"num\":0.5}]", {"a", "b"});
  expect_error("51-[\"e\",{\"_placeholder\":true,\"num\":\"0\"}]", {"a"});
  expect_error("51-[\"e\",{\"_placeholder\":true,\"num\":null}]", {"a"});
  expect_error("51-[\"e\",{\"_placeholder\":true,\"num\":[0]}]", {"a"});
  expect_error("51-[\"e\",{\"_placeholder\":true,\"num\":true}]", {"a"});
}

TEST(SocketIoPlaceholders, AcceptsIntegralDoubleNum) {
  EXPECT_TRUE(decode_all("52-[\"e\",{\"_placeholder\":true,\"num\":1.0}]", {"a", "b"}).ok());
}

TEST(SocketIoPlaceholders, RejectsMissingNum) {
  expect_error("51-[\"e\",{\"_placeholder\":true}]", {"a"});
  expect_error("51-[\"e\",{\"_placeholder\":true,\"Num\":0}]", {"a"});
}

TEST(SocketIoPlaceholders, IgnoresObjectsThatAreNotPlaceholders) {
  // Only `_placeholder: true` marks a placeholder, as in socket.io-parser's reconstruction.
  EXPECT_TRUE(decode_all("51-[\"e\",{\"_placeholder\":false,\"num\":9},{\"_placeholder\":true,\"num\":0}]",
                         {"a"}).ok());
  EXPECT_TRUE(decode_all("51-[\"e\",{\"_placeholder\":1,\"num\":9}]", {"a"}).ok());
  EXPECT_TRUE(decode_all("51-[\"e\",{\"num\":9}]", {"a"}).ok());
}

TEST(SocketIoPlaceholders, PlaceholdersInTextPacketsAreNotChecked) {
  // An EVENT has no attachments; a look-alike object is ordinary data there.
  EXPECT_TRUE(decode_all("2[\"e\",{\"_placeholder\":true,\"num\":5}]").ok());
}

// ---- attachments and decoder state ----

TEST(SocketIoDecoder, RejectsTextWhileAttachmentsPending) {
  Decoder d;
  ASSERT_TRUE(d.feed_text("52-[\"e\",{\"_placeholder\":true,\"num\":0}]").ok());
  ASSERT_TRUE(d.feed_binary("a").ok());
  auto r = d.feed_text("2[\"e\"]");
  EXPECT_FALSE(r.ok());
}

TEST(SocketIoDecoder, RejectsBinaryWithoutPendingPacket) {
  Decoder d;
  EXPECT_FALSE(d.feed_binary("a").ok());
  ASSERT_TRUE(d.feed_text("2[\"e\"]").ok());
  EXPECT_FALSE(d.feed_binary("a").ok());
}

TEST(SocketIoDecoder, RejectsBinaryPacketWithoutPayload) {
  expect_error("51-", {"a"});
  expect_error("61-/chat,4", {"a"});
}

TEST(SocketIoValidate, RejectsAttachmentCountMismatch) {
  Packet p;
  p.type = PacketType::kBinaryEvent;
  p.data = "[\"e\",{\"_placeholder\":true,\"num\":0}]";
  p.attachment_count = 1;
  EXPECT_FALSE(validate(p).ok());
  p.attachments.push_back("a");
  EXPECT_TRUE(validate(p).ok());
  p.attachments.push_back("b");
  EXPECT_FALSE(validate(p).ok());
}

// ---- payload shapes by type ----

TEST(SocketIoPayload, EventMustBeNonEmptyArrayStartingWithString) {
  expect_error("2{\"a\":1}");
  expect_error("2\"hello\"");
  expect_error("2true");
  expect_error("2[]");
  expect_error("2[1,\"a\"]");
  expect_error("2[null]");
  expect_error("2[[\"a\"]]");
  expect_error("2/chat,");  // missing payload
  expect_error("2");
  expect_error("51-{\"_placeholder\":true,\"num\":0}", {"a"});
  expect_error("51-[{\"_placeholder\":true,\"num\":0}]", {"a"});  // first element not a string
  expect_error("50-[]");
}

TEST(SocketIoPayload, AckMustBeArray) {
  expect_error("31{}");
  expect_error("31\"a\"");
  expect_error("31");  // missing payload
  expect_error("61-1{\"_placeholder\":true,\"num\":0}", {"a"});
}

TEST(SocketIoPayload, ConnectMustBeObjectOrAbsent) {
  expect_error("0[]");
  expect_error("0\"token\"");
  expect_error("0/chat,null");
  expect_error("0/chat,true");
}

TEST(SocketIoPayload, ConnectErrorMustBeObjectOrString) {
  expect_error("4[\"a\"]");
  expect_error("4null");
  expect_error("4");  // missing payload
}

TEST(SocketIoPayload, DisconnectMustNotCarryPayload) {
  expect_error("1{}");
  expect_error("1/chat,[\"a\"]");
  expect_error("1/chat,\"bye\"");
}

TEST(SocketIoPayload, RejectsInvalidJson) {
  expect_error("2[\"a\"");
  expect_error("2[\"a\",]");
  expect_error("2[\"a\"]]");
  expect_error("2['a']");
  expect_error("2[\"a\"] x");
  expect_error("0{token:1}");
  expect_error("4{\"message\":}");
  expect_error("2[\"\xff\"]");  // invalid UTF-8 is not JSON
  expect_error("51-[\"e\",{\"_placeholder\":true,\"num\":0}", {"a"});
}

// ---- event_name ----

TEST(SocketIoEventName, ReturnsFirstElementUnescaped) {
  Packet p;
  p.data = "[\"a\\\"b\\u00e9\",1]";
  EXPECT_EQ(event_name(p), "a\"b\xc3\xa9");
}

TEST(SocketIoEventName, EmptyWhenThereIsNoStringName) {
  Packet p;
  p.data = "[1]";
  EXPECT_EQ(event_name(p), "");
  p.data = "not json";
  EXPECT_EQ(event_name(p), "");
}

// ---- encoding ----

TEST(SocketIoEncode, MatchesReferenceEncoderForEveryType) {
  // Expected strings are socket.io-parser 4.x Encoder output.
  Packet connect = make_packet(PacketType::kConnect, "/admin", std::nullopt, "{\"token\":\"abc\"}", 0);
  EXPECT_EQ(encode_text(connect), "0/admin,{\"token\":\"abc\"}");
  Packet disconnect = make_packet(PacketType::kDisconnect, "/chat", std::nullopt, "", 0);
  EXPECT_EQ(encode_text(disconnect), "1/chat,");
  Packet event = make_packet(PacketType::kEvent, "/", std::nullopt, "[\"hello\",{\"a\":1}]", 0);
  EXPECT_EQ(encode_text(event), "2[\"hello\",{\"a\":1}]");
  Packet event_ack = make_packet(PacketType::kEvent, "/chat", 12, "[\"msg\",\"x\"]", 0);
  EXPECT_EQ(encode_text(event_ack), "2/chat,12[\"msg\",\"x\"]");
  Packet ack = make_packet(PacketType::kAck, "/", 7, "[]", 0);
  EXPECT_EQ(encode_text(ack), "37[]");
  Packet error = make_packet(PacketType::kConnectError, "/", std::nullopt, "{\"message\":\"Not authorized\"}", 0);
  EXPECT_EQ(encode_text(error), "4{\"message\":\"Not authorized\"}");
  Packet bin = make_packet(PacketType::kBinaryEvent, "/chat", 3, "[\"up\",{\"_placeholder\":true,\"num\":0}]", 1);
  EXPECT_EQ(encode_text(bin), "51-/chat,3[\"up\",{\"_placeholder\":true,\"num\":0}]");
  Packet bin_ack = make_packet(PacketType::kBinaryAck, "/", 7, "[{\"_placeholder\":true,\"num\":0}]", 1);
  EXPECT_EQ(encode_text(bin_ack), "61-7[{\"_placeholder\":true,\"num\":0}]");
}

TEST(SocketIoEncode, AppendTextKeepsPrefixAndOmitsDefaultNamespace) {
  std::string out = "4";  // the Engine.IO message type, written by the caller
  append_text(out, PacketType::kEvent, "", std::nullopt, "[\"a\"]");
  EXPECT_EQ(out, "42[\"a\"]");
  out.clear();
  append_text(out, PacketType::kEvent, "/", 0, "[\"a\"]");
  EXPECT_EQ(out, "20[\"a\"]");
  out.clear();
  append_text(out, PacketType::kBinaryAck, "/x", 1, "[]", 12);
  EXPECT_EQ(out, "612-/x,1[]");
}

TEST(SocketIoEncode, RoundTripsThroughDecoder) {
  const Packet packets[] = {
      make_packet(PacketType::kConnect, "/", std::nullopt, ""),
      make_packet(PacketType::kConnect, "/admin", std::nullopt, "{\"token\":\"abc\"}"),
      make_packet(PacketType::kDisconnect, "/chat", std::nullopt, ""),
      make_packet(PacketType::kEvent, "/", std::nullopt, "[\"hello\",{\"a\":1}]"),
      make_packet(PacketType::kEvent, "/chat", 999999999999999, "[\"h\xc3\xa9\",\"\\n\"]"),
      make_packet(PacketType::kAck, "/chat", 0, "[]"),
      make_packet(PacketType::kConnectError, "/x", std::nullopt, "\"nope\""),
      make_packet(PacketType::kBinaryEvent, "/", 5,
                  "[\"e\",{\"_placeholder\":true,\"num\":1},{\"_placeholder\":true,\"num\":0}]", 2,
                  {"\x00"s, "\xff\xfe"s}),
      make_packet(PacketType::kBinaryAck, "/chat", 1, "[{\"_placeholder\":true,\"num\":0}]", 1, {""}),
  };
  for (const auto& want : packets) {
    const std::string text = encode_text(want);
    SCOPED_TRACE(text);
    auto got = decode_all(text, want.attachments);
    ASSERT_TRUE(got.ok()) << got.error().message;
    EXPECT_EQ(got->type, want.type);
    EXPECT_EQ(got->nsp, want.nsp);
    EXPECT_EQ(got->id, want.id);
    EXPECT_EQ(got->data, want.data);
    EXPECT_EQ(got->attachment_count, want.attachment_count);
    EXPECT_EQ(got->attachments, want.attachments);
  }
}

// ---- append_json_string ----

std::string json_string(std::string_view s) {
  std::string out;
  append_json_string(out, s);
  return out;
}

TEST(SocketIoJsonString, EscapesLikeJsonStringify) {
  // JSON.stringify("a\b\f\n\r\t\"\\") in Node.
  EXPECT_EQ(json_string("a\b\f\n\r\t\"\\"), R"("a\b\f\n\r\t\"\\")");
}

TEST(SocketIoJsonString, EscapesOtherControlCharactersAsLowercaseHex) {
  // JSON.stringify("\x00\x01\x0b\x1f") === '"\\u0000\\u0001\\u000b\\u001f"'
  EXPECT_EQ(json_string("\x00\x01\x0b\x1f"s), R"("\u0000\u0001\u000b\u001f")");
}

TEST(SocketIoJsonString, PassesThroughPrintableAsciiDelAndUtf8) {
  // JSON.stringify leaves "/", DEL, non-ASCII and U+2028 as they are.
  const std::string s = "/ ~\x7f" "\xc3\xa9\xf0\x9f\x98\x80\xe2\x80\xa8";
  EXPECT_EQ(json_string(s), "\"" + s + "\"");
}

// The clean prefix is found eight bytes at a time: every byte value, at every place in and around a word,
// in ASCII and non-ASCII neighbourhoods, escapes as a byte-at-a-time reading of JSON.stringify's rules.
TEST(SocketIoJsonString, EveryByteAtEveryOffsetEscapesAsOneByteAtATime) {
  auto reference = [](std::string_view s) {
    std::string out = "\"";
    for (unsigned char c : s) {
      switch (c) {
        case '"': out += "\\\""; break;
        case '\\': out += "\\\\"; break;
        case '\b': out += "\\b"; break;
        case '\f': out += "\\f"; break;
        case '\n': out += "\\n"; break;
        case '\r': out += "\\r"; break;
        case '\t': out += "\\t"; break;
        default:
          if (c < 0x20) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\u%04x", c);
            out += buf;
          } else {
            out.push_back(static_cast<char>(c));
          }
      }
    }
    return out + "\"";
  };
  for (char fill : {'a', '\x80', '\xff', '!', '#', '[', ']'}) {
    for (size_t len : {size_t{1}, size_t{7}, size_t{8}, size_t{9}, size_t{16}, size_t{17}, size_t{24}}) {
      for (size_t at = 0; at < len; ++at) {
        for (int c = 0; c < 256; ++c) {
          std::string s(len, fill);
          s[at] = static_cast<char>(c);
          ASSERT_EQ(json_string(s), reference(s)) << "fill " << int(fill) << " length " << len << " at " << at << " byte " << c;
        }
      }
    }
  }
}

TEST(SocketIoJsonString, AppendsToExistingText) {
  std::string out = "[";
  append_json_string(out, "");
  out.push_back(']');
  EXPECT_EQ(out, "[\"\"]");
}

TEST(SocketIoJsonString, OutputIsAValidEventName) {
  std::string all;
  for (int c = 0; c < 0x80; ++c) all.push_back(static_cast<char>(c));
  all += "\xc3\xa9";
  Packet p;
  p.data = "[";
  append_json_string(p.data, all);
  p.data += "]";
  ASSERT_TRUE(validate(p).ok());
  EXPECT_EQ(event_name(p), all);
}

// Issue 12 item 6: a packet and all its attachments fit in the decoder's budget (max_payload); a count
// of attachments the budget cannot hold is refused before any arrives.
TEST(SocketIoDecoder, APacketWithItsAttachmentsFitsTheBudget) {
  Decoder d(10000);
  ASSERT_TRUE(d.feed_text(R"(51-["e",{"_placeholder":true,"num":0}])").ok());
  ASSERT_TRUE(d.feed_binary(std::string(5000, 'a')).ok());
  Decoder small(10000);
  ASSERT_TRUE(small.feed_text(R"(52-["e",{"_placeholder":true,"num":0},{"_placeholder":true,"num":1}])").ok());
  ASSERT_TRUE(small.feed_binary(std::string(6000, 'a')).ok());
  auto over = small.feed_binary(std::string(6000, 'b'));
  ASSERT_FALSE(over.ok());
  EXPECT_NE(over.error().message.find("maximum payload"), std::string::npos);
  EXPECT_FALSE(small.awaiting_attachments()) << "the half packet is dropped";
  Decoder many(10000);
  EXPECT_FALSE(many.feed_text(R"(5200-["e"])").ok()) << "200 attachments cost more than the budget before any arrives";
}

}  // namespace
}  // namespace siomq::sio
