#include "wire/engineio.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace siomq::eio {
namespace {

using namespace std::string_literals;

// "héllo😀": é is 2 UTF-8 bytes / 1 UTF-16 unit, 😀 is 4 bytes / 2 units (a surrogate pair).
const std::string kMultibyte = "h\xc3\xa9llo\xf0\x9f\x98\x80";

void expect_packet(const Packet& p, PacketType type, bool binary, const std::string& data) {
  EXPECT_EQ(p.type, type);
  EXPECT_EQ(p.binary, binary);
  EXPECT_EQ(p.data, data);
}

// ---- single packets ----

TEST(EngineIoText, DecodesEveryPacketType) {
  const PacketType types[] = {PacketType::kOpen,    PacketType::kClose,   PacketType::kPing, PacketType::kPong,
                              PacketType::kMessage, PacketType::kUpgrade, PacketType::kNoop};
  for (int t = 0; t <= 6; ++t) {
    std::string text = std::to_string(t) + "data" + std::to_string(t);
    auto p = decode_text(text);
    ASSERT_TRUE(p.ok()) << text;
    expect_packet(*p, types[t], false, "data" + std::to_string(t));
  }
}

TEST(EngineIoText, DecodesPacketsWithoutData) {
  auto p = decode_text("2");
  ASSERT_TRUE(p.ok());
  expect_packet(*p, PacketType::kPing, false, "");
}

TEST(EngineIoText, KeepsDataVerbatim) {
  auto p = decode_text("2probe");
  ASSERT_TRUE(p.ok());
  expect_packet(*p, PacketType::kPing, false, "probe");
  auto m = decode_text("4" + kMultibyte + "\x1e\0"s);
  ASSERT_TRUE(m.ok());
  expect_packet(*m, PacketType::kMessage, false, kMultibyte + "\x1e\0"s);
}

TEST(EngineIoText, RejectsEmptyPacket) { EXPECT_FALSE(decode_text("").ok()); }

TEST(EngineIoText, RejectsUnknownTypeDigit) {
  EXPECT_FALSE(decode_text("7").ok());
  EXPECT_FALSE(decode_text("9hello").ok());
  EXPECT_FALSE(decode_text("/").ok());  // '0' - 1
  EXPECT_FALSE(decode_text(":").ok());  // '9' + 1
  EXPECT_FALSE(decode_text("a").ok());
  EXPECT_FALSE(decode_text("\xff").ok());
  EXPECT_FALSE(decode_text(" 4").ok());
}

TEST(EngineIoBinary, Protocol4FrameIsTheMessageBytes) {
  auto p = decode_binary("\x04\x00\xff"s, 4);
  ASSERT_TRUE(p.ok());
  expect_packet(*p, PacketType::kMessage, true, "\x04\x00\xff"s);
  auto empty = decode_binary("", 4);
  ASSERT_TRUE(empty.ok());
  expect_packet(*empty, PacketType::kMessage, true, "");
}

TEST(EngineIoBinary, Protocol3FrameStripsLeadingMessageType) {
  // engine.io-parser 2.x encodePacket({type:'message', data:Buffer[1,2,3]}) -> 04 01 02 03
  auto p = decode_binary("\x04\x01\x02\x03"s, 3);
  ASSERT_TRUE(p.ok());
  expect_packet(*p, PacketType::kMessage, true, "\x01\x02\x03"s);
  auto only_type = decode_binary("\x04"s, 3);
  ASSERT_TRUE(only_type.ok());
  expect_packet(*only_type, PacketType::kMessage, true, "");
}

TEST(EngineIoBinary, Protocol3FrameMustStartWithMessageType) {
  EXPECT_FALSE(decode_binary("", 3).ok());
  EXPECT_FALSE(decode_binary("\x02\x01"s, 3).ok());
  EXPECT_FALSE(decode_binary("4\x01"s, 3).ok());  // the ASCII digit is not the type byte
  EXPECT_FALSE(decode_binary("\x00\x04"s, 3).ok());
}

// ---- utf16_length ----

TEST(EngineIoUtf16, CountsCodeUnitsLikeJavaScript) {
  EXPECT_EQ(utf16_length(""), 0u);
  EXPECT_EQ(utf16_length("abc"), 3u);
  EXPECT_EQ(utf16_length("\xc3\xa9"), 1u);          // é
  EXPECT_EQ(utf16_length("\xe2\x82\xac"), 1u);      // €
  EXPECT_EQ(utf16_length("\xf0\x9f\x98\x80"), 2u);  // 😀
  EXPECT_EQ(utf16_length("4" + kMultibyte), 8u);     // "4héllo😀".length === 8
}

// ---- v4 payloads ----

TEST(EngineIoPayloadV4, DecodesSinglePacket) {
  auto r = decode_payload("4hello", 4, false);
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->size(), 1u);
  expect_packet((*r)[0], PacketType::kMessage, false, "hello");
}

TEST(EngineIoPayloadV4, DecodesRecordSeparatedTextAndBase64Binary) {
  // engine.io-parser 5.x encodePayload([{message "hello"}, {message Buffer[1,2,3]}, {ping}])
  auto r = decode_payload("4hello\x1e" "bAQID\x1e" "2", 4, false);
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->size(), 3u);
  expect_packet((*r)[0], PacketType::kMessage, false, "hello");
  expect_packet((*r)[1], PacketType::kMessage, true, "\x01\x02\x03"s);
  expect_packet((*r)[2], PacketType::kPing, false, "");
}

TEST(EngineIoPayloadV4, DecodesEmptyBinary) {
  auto r = decode_payload("b", 4, false);
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->size(), 1u);
  expect_packet((*r)[0], PacketType::kMessage, true, "");
}

TEST(EngineIoPayloadV4, KeepsMultibyteTextIntact) {
  auto r = decode_payload("4" + kMultibyte + "\x1e" "4" + kMultibyte, 4, false);
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->size(), 2u);
  expect_packet((*r)[0], PacketType::kMessage, false, kMultibyte);
  expect_packet((*r)[1], PacketType::kMessage, false, kMultibyte);
}

TEST(EngineIoPayloadV4, RejectsEmptyBodyAndEmptyRecords) {
  EXPECT_FALSE(decode_payload("", 4, false).ok());
  EXPECT_FALSE(decode_payload("\x1e", 4, false).ok());
  EXPECT_FALSE(decode_payload("4a\x1e", 4, false).ok());
  EXPECT_FALSE(decode_payload("\x1e" "4a", 4, false).ok());
  EXPECT_FALSE(decode_payload("4a\x1e\x1e" "4b", 4, false).ok());
}

TEST(EngineIoPayloadV4, RejectsUnknownTypeInAnyRecord) {
  EXPECT_FALSE(decode_payload("4a\x1e" "8b", 4, false).ok());
  EXPECT_FALSE(decode_payload("x", 4, false).ok());
}

TEST(EngineIoPayloadV4, RejectsBadBase64) {
  EXPECT_FALSE(decode_payload("bAQIDA", 4, false).ok());  // length not a multiple of 4
  EXPECT_FALSE(decode_payload("bAQ", 4, false).ok());
  EXPECT_FALSE(decode_payload("bAQ*D", 4, false).ok());
  EXPECT_FALSE(decode_payload("bAQ=D", 4, false).ok());
  EXPECT_FALSE(decode_payload("4ok\x1e" "b!!!!", 4, false).ok());
  EXPECT_FALSE(decode_payload("b4AQID", 4, false).ok());  // the v3 "b4" form is not v4
}

// ---- v3 text payloads ----

TEST(EngineIoPayloadV3Text, DecodesLengthPrefixedPackets) {
  auto r = decode_payload("6:4hello2:2x", 3, false);
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->size(), 2u);
  expect_packet((*r)[0], PacketType::kMessage, false, "hello");
  expect_packet((*r)[1], PacketType::kPing, false, "x");
}

TEST(EngineIoPayloadV3Text, LengthsCountUtf16CodeUnits) {
  // engine.io-parser 2.x encodePayload([{message "héllo😀"}, {ping "probe"}]) === "8:4héllo😀6:2probe"
  auto r = decode_payload("8:4" + kMultibyte + "6:2probe", 3, false);
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->size(), 2u);
  expect_packet((*r)[0], PacketType::kMessage, false, kMultibyte);
  expect_packet((*r)[1], PacketType::kPing, false, "probe");

  auto euro = decode_payload("2:4\xe2\x82\xac", 3, false);  // a 3-byte character is one unit
  ASSERT_TRUE(euro.ok());
  expect_packet((*euro)[0], PacketType::kMessage, false, "\xe2\x82\xac");
}

TEST(EngineIoPayloadV3Text, ByteLengthsAreWrong) {
  // 12 is the UTF-8 byte length of "4héllo😀"; a v3 peer would have written 8.
  EXPECT_FALSE(decode_payload("12:4" + kMultibyte, 3, false).ok());
}

TEST(EngineIoPayloadV3Text, RejectsLengthThatSplitsASurrogatePair) {
  // "4😀" is 3 units; 2 would end between the two halves of the pair.
  EXPECT_FALSE(decode_payload("2:4\xf0\x9f\x98\x80", 3, false).ok());
  EXPECT_TRUE(decode_payload("3:4\xf0\x9f\x98\x80", 3, false).ok());
}

TEST(EngineIoPayloadV3Text, RejectsTruncatedMultibyteCharacter) {
  EXPECT_FALSE(decode_payload("2:4\xe2\x82", 3, false).ok());
  EXPECT_FALSE(decode_payload("2:4\x80", 3, false).ok());  // a lone continuation byte
}

TEST(EngineIoPayloadV3Text, RejectsWrongLengths) {
  EXPECT_FALSE(decode_payload("7:4hello", 3, false).ok());     // longer than the body
  EXPECT_FALSE(decode_payload("5:4hello", 3, false).ok());     // "o" is then parsed as a length
  EXPECT_FALSE(decode_payload("0:", 3, false).ok());           // empty packet
  EXPECT_FALSE(decode_payload("6:4hello1:", 3, false).ok());   // second packet truncated
  EXPECT_FALSE(decode_payload("6:4hello6", 3, false).ok());    // trailing length without colon
  EXPECT_FALSE(decode_payload("99999999999:4", 3, false).ok());  // more than 10 digits
}

TEST(EngineIoPayloadV3Text, LengthHasAtMostTenDigits) {
  EXPECT_TRUE(decode_payload("0000000003:4hi", 3, false).ok());
  EXPECT_FALSE(decode_payload("00000000003:4hi", 3, false).ok());
}

TEST(EngineIoPayloadV3Binary, LengthHasAtMostTenDigits) {
  EXPECT_TRUE(decode_payload("\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x02\xff" "4a"s, 3, true).ok());
  EXPECT_FALSE(decode_payload("\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x02\xff" "4a"s, 3, true).ok());
}

TEST(EngineIoPayloadV3Text, RejectsNonDigitLengths) {
  EXPECT_FALSE(decode_payload("", 3, false).ok());
  EXPECT_FALSE(decode_payload(":4hello", 3, false).ok());
  EXPECT_FALSE(decode_payload("a:4hello", 3, false).ok());
  EXPECT_FALSE(decode_payload("6a:4hello", 3, false).ok());
  EXPECT_FALSE(decode_payload("-6:4hello", 3, false).ok());
  EXPECT_FALSE(decode_payload(" 6:4hello", 3, false).ok());
  EXPECT_FALSE(decode_payload("4hello", 3, false).ok());  // no length at all
}

TEST(EngineIoPayloadV3Text, RejectsUnknownTypeInsidePacket) {
  EXPECT_FALSE(decode_payload("2:9x", 3, false).ok());
}

TEST(EngineIoPayloadV3Text, DecodesBase64Binary) {
  // engine.io-parser 2.x encodePayload([{message "hi"}, {message Buffer[1,2,3]}], false) === "3:4hi6:b4AQID"
  auto r = decode_payload("3:4hi6:b4AQID", 3, false);
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->size(), 2u);
  expect_packet((*r)[0], PacketType::kMessage, false, "hi");
  expect_packet((*r)[1], PacketType::kMessage, true, "\x01\x02\x03"s);
}

TEST(EngineIoPayloadV3Text, RejectsBadBase64Binary) {
  EXPECT_FALSE(decode_payload("1:b", 3, false).ok());
  EXPECT_FALSE(decode_payload("6:b2AQID", 3, false).ok());  // only messages may be binary
  EXPECT_FALSE(decode_payload("5:bAQID", 3, false).ok());   // v4 form, no type
  EXPECT_FALSE(decode_payload("6:b4AQI*", 3, false).ok());
  EXPECT_FALSE(decode_payload("5:b4AQI", 3, false).ok());
}

// ---- v3 binary payloads ----

TEST(EngineIoPayloadV3Binary, DecodesTextAndBinaryPackets) {
  // engine.io-parser 2.x encodePayloadAsBinary([{message "hé"}, {message Buffer[1,2,3]}]): text lengths
  // are UTF-8 bytes here, binary lengths include the type byte.
  std::string body = "\x00\x04\xff" "4h\xc3\xa9" "\x01\x04\xff\x04\x01\x02\x03"s;
  auto r = decode_payload(body, 3, true);
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->size(), 2u);
  expect_packet((*r)[0], PacketType::kMessage, false, "h\xc3\xa9");
  expect_packet((*r)[1], PacketType::kMessage, true, "\x01\x02\x03"s);
}

TEST(EngineIoPayloadV3Binary, DecodesMultiDigitLengths) {
  std::string data(123, 'z');
  std::string body = "\x00\x01\x02\x04\xff"s + "4" + data;
  auto r = decode_payload(body, 3, true);
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->size(), 1u);
  expect_packet((*r)[0], PacketType::kMessage, false, data);
}

TEST(EngineIoPayloadV3Binary, RejectsBadFraming) {
  EXPECT_FALSE(decode_payload("", 3, true).ok());
  EXPECT_FALSE(decode_payload("\x02\x01\xff" "4"s, 3, true).ok());        // marker not 0 or 1
  EXPECT_FALSE(decode_payload("0\x01\xff" "4"s, 3, true).ok());           // ASCII marker
  EXPECT_FALSE(decode_payload("\x00\xff" "4"s, 3, true).ok());            // no length digits
  EXPECT_FALSE(decode_payload("\x00\x01"s, 3, true).ok());                // no 0xff terminator
  EXPECT_FALSE(decode_payload("\x00\x0a\xff" "4"s, 3, true).ok());        // digit byte > 9
  EXPECT_FALSE(decode_payload("\x00" "1\xff" "4"s, 3, true).ok());        // ASCII digit
  EXPECT_FALSE(decode_payload("\x00\x00\xff"s, 3, true).ok());            // zero length
  EXPECT_FALSE(decode_payload("\x00\x03\xff" "4a"s, 3, true).ok());       // length past the end
  EXPECT_FALSE(decode_payload("\x00\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\xff"s, 3, true).ok());  // 11 digits
  EXPECT_FALSE(decode_payload("\x00\x01\xff" "4\x00"s, 3, true).ok());    // trailing garbage
}

TEST(EngineIoPayloadV3Binary, RejectsBadPacketsInsideFraming) {
  EXPECT_FALSE(decode_payload("\x00\x01\xff" "9"s, 3, true).ok());        // unknown text type
  EXPECT_FALSE(decode_payload("\x01\x02\xff\x02\x01"s, 3, true).ok());    // binary not a message
}

// ---- encode_payload ----

std::vector<Packet> frames_to_packets(const std::vector<Frame>& frames) {
  std::vector<Packet> out;
  for (const auto& f : frames) {
    if (f.binary) {
      out.push_back(Packet{PacketType::kMessage, true, std::string(f.bytes)});
    } else {
      out.push_back(Packet{static_cast<PacketType>(f.bytes[0] - '0'), false, std::string(f.bytes.substr(1))});
    }
  }
  return out;
}

void expect_same(const std::vector<Packet>& got, const std::vector<Packet>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    SCOPED_TRACE(i);
    expect_packet(got[i], want[i].type, want[i].binary, want[i].data);
  }
}

const std::string kBinary = "\x00\x01\xff\x1e:"s;
// Frames hold views, so their bytes live in named strings.
const std::string kMultibyteMessage = "4" + kMultibyte;
const std::string kBigMessage = "4" + std::string(70000, 'q');

TEST(EngineIoEncodePayload, Protocol4MatchesReferenceEncoder) {
  const std::vector<Frame> frames = {{false, "4hello"}, {true, "\x01\x02\x03"}, {false, "2"}};
  EXPECT_EQ(encode_payload(frames, 4), "4hello\x1e" "bAQID\x1e" "2");
}

TEST(EngineIoEncodePayload, Protocol3MatchesReferenceEncoder) {
  const std::vector<Frame> text = {{false, kMultibyteMessage}, {false, "2probe"}};
  EXPECT_EQ(encode_payload(text, 3), "8:4" + kMultibyte + "6:2probe");
  const std::vector<Frame> mixed = {{false, "4hi"}, {true, "\x01\x02\x03"}};
  EXPECT_EQ(encode_payload(mixed, 3), "3:4hi6:b4AQID");
}

TEST(EngineIoEncodePayload, EmptyFrameListIsEmptyBody) {
  EXPECT_EQ(encode_payload({}, 4), "");
  EXPECT_EQ(encode_payload({}, 3), "");
}

TEST(EngineIoEncodePayload, Protocol4RoundTrips) {
  const std::vector<Frame> frames = {{false, "0{\"sid\":\"abc\"}"}, {false, kMultibyteMessage}, {true, kBinary},
                                     {true, ""}, {false, "6"}, {false, "4:colon"}, {false, kBigMessage}};
  auto r = decode_payload(encode_payload(frames, 4), 4, false);
  ASSERT_TRUE(r.ok()) << r.error().message;
  expect_same(*r, frames_to_packets(frames));
}

TEST(EngineIoEncodePayload, Protocol3RoundTrips) {
  const std::vector<Frame> frames = {{false, "0{\"sid\":\"abc\"}"}, {false, kMultibyteMessage}, {true, kBinary},
                                     {true, ""}, {false, "6"}, {false, "412:34"}, {false, kBigMessage}};
  auto r = decode_payload(encode_payload(frames, 3), 3, false);
  ASSERT_TRUE(r.ok()) << r.error().message;
  expect_same(*r, frames_to_packets(frames));
}

TEST(EngineIoEncodePayload, SingleFrameHasNoSeparator) {
  const std::vector<Frame> one = {{false, "3pong"}};
  EXPECT_EQ(encode_payload(one, 4), "3pong");
  EXPECT_EQ(encode_payload(one, 3), "5:3pong");
}

// Issue 12 item 6: a body of many tiny packets is charged per packet, and refused while decoding.
TEST(EngineIoPayloadV4, ManyTinyPacketsAreChargedAgainstTheBudget) {
  std::string body = "6";
  for (int i = 0; i < 9999; ++i) body += "\x1e" "6";
  EXPECT_TRUE(decode_payload(body, 4, false).ok()) << "no budget given";
  auto refused = decode_payload(body, 4, false, 100000);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message.find("too many packets"), std::string::npos);
  EXPECT_TRUE(decode_payload(body, 4, false, body.size() + 10000 * kPayloadPacketOverhead).ok());
  EXPECT_FALSE(decode_payload(body, 4, false, body.size() - 1).ok());
}

}  // namespace
}  // namespace siomq::eio
