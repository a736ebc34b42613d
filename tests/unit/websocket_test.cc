#include "wire/websocket.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

namespace siomq::ws {
namespace {

using namespace std::string_literals;

constexpr uint8_t kMask[4] = {0x37, 0xfa, 0x21, 0x3d};  // the RFC 6455 section 5.7 example key
constexpr size_t kMax = 1 << 20;

// Builds one frame; `mask` null for a server frame. `first_byte_extra` sets reserved bits.
std::string frame(Opcode op, std::string_view payload, const uint8_t* mask = kMask, bool fin = true,
                  uint8_t first_byte_extra = 0) {
  uint8_t header[kMaxHeaderSize];
  size_t h = encode_header(header, op, fin, payload.size(), mask);
  header[0] |= first_byte_extra;
  std::string out(reinterpret_cast<const char*>(header), h);
  std::string body(payload);
  if (mask) apply_mask(body.data(), body.size(), mask);
  return out + body;
}

// An event with its payload copied out of the reader.
struct Seen {
  Event::Kind kind;
  bool binary;
  std::string payload;
  uint16_t close_code;
  bool operator==(const Seen&) const = default;
};

void PrintTo(const Seen& s, std::ostream* os) {
  *os << "{kind=" << s.kind << " binary=" << s.binary << " payload(" << s.payload.size() << ")=\""
      << s.payload.substr(0, 40) << "\" close_code=" << s.close_code << "}";
}

// Feeds `bytes` in chunks of `chunk` bytes (0: all at once) and records the events.
struct Fed {
  Status status = Ok{};
  std::vector<Seen> events;
};

Fed feed(Reader& r, std::string in, size_t chunk = 0) {
  Fed out;
  if (chunk == 0) chunk = std::max<size_t>(in.size(), 1);
  for (size_t i = 0; i < in.size(); i += chunk) {
    size_t n = std::min(chunk, in.size() - i);
    out.status = r.feed(in.data() + i, n, [&](const Event& ev) {
      out.events.push_back({ev.kind, ev.binary, std::string(ev.payload), ev.close_code});
      return true;
    });
    if (!out.status) break;
  }
  return out;
}

Fed feed_server(std::string bytes, size_t chunk = 0, size_t max = kMax) {
  Reader r(true, max);
  return feed(r, std::move(bytes), chunk);
}

void expect_error_code(const Fed& f, uint16_t code) {
  ASSERT_FALSE(f.status.ok());
  EXPECT_EQ(f.status.error().code, code) << f.status.error().message;
}

std::string bytes(std::initializer_list<uint8_t> b) { return std::string(b.begin(), b.end()); }

// ---- encode_header ----

TEST(WebSocketHeader, SevenBitLength) {
  uint8_t h[kMaxHeaderSize];
  ASSERT_EQ(encode_header(h, Opcode::kText, true, 0, nullptr), 2u);
  EXPECT_EQ(h[0], 0x81);
  EXPECT_EQ(h[1], 0x00);
  ASSERT_EQ(encode_header(h, Opcode::kBinary, true, 125, nullptr), 2u);
  EXPECT_EQ(h[0], 0x82);
  EXPECT_EQ(h[1], 125);
}

TEST(WebSocketHeader, SixteenBitLength) {
  uint8_t h[kMaxHeaderSize];
  ASSERT_EQ(encode_header(h, Opcode::kText, true, 126, nullptr), 4u);
  EXPECT_EQ(h[1], 126);
  EXPECT_EQ(h[2], 0x00);
  EXPECT_EQ(h[3], 126);
  ASSERT_EQ(encode_header(h, Opcode::kText, true, 65535, nullptr), 4u);
  EXPECT_EQ(h[1], 126);
  EXPECT_EQ(h[2], 0xff);
  EXPECT_EQ(h[3], 0xff);
}

TEST(WebSocketHeader, SixtyFourBitLength) {
  uint8_t h[kMaxHeaderSize];
  ASSERT_EQ(encode_header(h, Opcode::kBinary, true, 65536, nullptr), 10u);
  EXPECT_EQ(h[1], 127);
  const uint8_t want[8] = {0, 0, 0, 0, 0, 1, 0, 0};
  for (int i = 0; i < 8; ++i) EXPECT_EQ(h[2 + i], want[i]) << i;
  ASSERT_EQ(encode_header(h, Opcode::kBinary, true, 0x0102030405060708ull, nullptr), 10u);
  for (int i = 0; i < 8; ++i) EXPECT_EQ(h[2 + i], i + 1) << i;
}

TEST(WebSocketHeader, FinAndOpcode) {
  uint8_t h[kMaxHeaderSize];
  encode_header(h, Opcode::kText, false, 1, nullptr);
  EXPECT_EQ(h[0], 0x01);
  encode_header(h, Opcode::kContinuation, true, 1, nullptr);
  EXPECT_EQ(h[0], 0x80);
  encode_header(h, Opcode::kClose, true, 2, nullptr);
  EXPECT_EQ(h[0], 0x88);
  encode_header(h, Opcode::kPing, true, 0, nullptr);
  EXPECT_EQ(h[0], 0x89);
  encode_header(h, Opcode::kPong, true, 0, nullptr);
  EXPECT_EQ(h[0], 0x8a);
}

// The mask is applied eight bytes at a time: every length around a word, from every place in the key,
// masks as one byte at a time does (RFC 6455 section 5.3: byte i with key byte (i + offset) mod 4).
TEST(WebSocketMask, WordAtATimeMasksAsByteAtATime) {
  for (size_t offset = 0; offset < 4; ++offset) {
    for (size_t n = 0; n <= 41; ++n) {
      std::string data;
      for (size_t i = 0; i < n; ++i) data.push_back(static_cast<char>(i * 37 + 11));
      std::string want = data;
      for (size_t i = 0; i < n; ++i) want[i] = static_cast<char>(want[i] ^ kMask[(i + offset) & 3]);
      apply_mask(data.data(), data.size(), kMask, offset);
      ASSERT_EQ(data, want) << "offset " << offset << " length " << n;
    }
  }
}

TEST(WebSocketHeader, MaskBitAndKeyFollowTheLength) {
  uint8_t h[kMaxHeaderSize];
  ASSERT_EQ(encode_header(h, Opcode::kText, true, 5, kMask), 6u);
  EXPECT_EQ(h[1], 0x85);
  EXPECT_EQ(std::string(reinterpret_cast<char*>(h + 2), 4), std::string(reinterpret_cast<const char*>(kMask), 4));
  ASSERT_EQ(encode_header(h, Opcode::kText, true, 126, kMask), 8u);
  EXPECT_EQ(h[1], 0x80 | 126);
  EXPECT_EQ(h[4], kMask[0]);
  ASSERT_EQ(encode_header(h, Opcode::kText, true, 65536, kMask), kMaxHeaderSize);
  EXPECT_EQ(h[1], 0x80 | 127);
  EXPECT_EQ(h[13], kMask[3]);
}

TEST(WebSocketHeader, MatchesRfcMaskedHelloExample) {
  // RFC 6455 5.7: a single-frame masked text message "Hello".
  EXPECT_EQ(frame(Opcode::kText, "Hello"), bytes({0x81, 0x85, 0x37, 0xfa, 0x21, 0x3d, 0x7f, 0x9f, 0x4d, 0x51, 0x58}));
  EXPECT_EQ(frame(Opcode::kText, "Hello", nullptr), bytes({0x81, 0x05, 0x48, 0x65, 0x6c, 0x6c, 0x6f}));
}

// ---- apply_mask / accept_key ----

TEST(WebSocketMask, IsAnInvolutionAndHonoursOffset) {
  std::string s = "Hello, world";
  apply_mask(s.data(), s.size(), kMask);
  EXPECT_NE(s, "Hello, world");
  apply_mask(s.data(), s.size(), kMask);
  EXPECT_EQ(s, "Hello, world");

  // Masking in two pieces with the right offset equals masking at once.
  std::string whole = "abcdefghij";
  std::string split = whole;
  apply_mask(whole.data(), whole.size(), kMask);
  apply_mask(split.data(), 3, kMask);
  apply_mask(split.data() + 3, split.size() - 3, kMask, 3);
  EXPECT_EQ(split, whole);
}

TEST(WebSocketAcceptKey, Rfc6455Example) {
  // RFC 6455 section 1.3 (and Node: sha1(key + ws GUID) in base64).
  EXPECT_EQ(accept_key("dGhlIHNhbXBsZSBub25jZQ=="), "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=");
}

TEST(WebSocketAcceptKey, DependsOnTheWholeKey) {
  // Node: crypto.createHash("sha1").update("x3JJHMbDL1EzLkh9GBhXDw==" + GUID).digest("base64")
  EXPECT_EQ(accept_key("x3JJHMbDL1EzLkh9GBhXDw=="), "HSmrc0sMlYUkAGmm5OPpG2HaGWk=");
}

// ---- Reader: whole messages ----

TEST(WebSocketReader, ReadsMaskedClientTextFrame) {
  auto f = feed_server(bytes({0x81, 0x85, 0x37, 0xfa, 0x21, 0x3d, 0x7f, 0x9f, 0x4d, 0x51, 0x58}));
  ASSERT_TRUE(f.status.ok()) << f.status.error().message;
  ASSERT_EQ(f.events.size(), 1u);
  EXPECT_EQ(f.events[0], (Seen{Event::kMessage, false, "Hello", 0}));
}

TEST(WebSocketReader, ReadsUnmaskedServerFramesOnAClient) {
  Reader r(false, kMax);
  auto f = feed(r, bytes({0x81, 0x05, 0x48, 0x65, 0x6c, 0x6c, 0x6f}) + frame(Opcode::kBinary, "\x00\xff"s, nullptr));
  ASSERT_TRUE(f.status.ok()) << f.status.error().message;
  ASSERT_EQ(f.events.size(), 2u);
  EXPECT_EQ(f.events[0], (Seen{Event::kMessage, false, "Hello", 0}));
  EXPECT_EQ(f.events[1], (Seen{Event::kMessage, true, "\x00\xff"s, 0}));
}

TEST(WebSocketReader, ReadsEmptyMessages) {
  auto f = feed_server(frame(Opcode::kText, "") + frame(Opcode::kBinary, ""));
  ASSERT_TRUE(f.status.ok());
  ASSERT_EQ(f.events.size(), 2u);
  EXPECT_EQ(f.events[0], (Seen{Event::kMessage, false, "", 0}));
  EXPECT_EQ(f.events[1], (Seen{Event::kMessage, true, "", 0}));
}

TEST(WebSocketReader, ReadsExtendedLengths) {
  const std::string medium(126, 'm');
  const std::string large(70000, 'L');
  auto f = feed_server(frame(Opcode::kText, medium) + frame(Opcode::kBinary, large));
  ASSERT_TRUE(f.status.ok()) << f.status.error().message;
  ASSERT_EQ(f.events.size(), 2u);
  EXPECT_EQ(f.events[0].payload, medium);
  EXPECT_EQ(f.events[1].payload, large);
  EXPECT_TRUE(f.events[1].binary);
}

TEST(WebSocketReader, ReadsPingAndPong) {
  auto f = feed_server(frame(Opcode::kPing, "Hello") + frame(Opcode::kPong, "") + frame(Opcode::kPing, std::string(125, 'p')));
  ASSERT_TRUE(f.status.ok());
  ASSERT_EQ(f.events.size(), 3u);
  EXPECT_EQ(f.events[0], (Seen{Event::kPing, false, "Hello", 0}));
  EXPECT_EQ(f.events[1], (Seen{Event::kPong, false, "", 0}));
  EXPECT_EQ(f.events[2].payload.size(), 125u);
}

TEST(WebSocketReader, ReadsCloseWithCodeAndReason) {
  auto f = feed_server(frame(Opcode::kClose, "\x03\xe9" "bye"s));
  ASSERT_TRUE(f.status.ok());
  ASSERT_EQ(f.events.size(), 1u);
  EXPECT_EQ(f.events[0], (Seen{Event::kClose, false, "bye", 1001}));
}

TEST(WebSocketReader, ReadsCloseWithCodeOnlyAndEmptyClose) {
  auto f = feed_server(frame(Opcode::kClose, "\x03\xe8"s));
  ASSERT_TRUE(f.status.ok());
  ASSERT_EQ(f.events.size(), 1u);
  EXPECT_EQ(f.events[0], (Seen{Event::kClose, false, "", kCloseNormal}));
  auto empty = feed_server(frame(Opcode::kClose, ""));
  ASSERT_TRUE(empty.status.ok());
  ASSERT_EQ(empty.events.size(), 1u);
  EXPECT_EQ(empty.events[0], (Seen{Event::kClose, false, "", 0}));
}

std::string close_payload(uint16_t code, std::string_view reason = "") {
  std::string out;
  out.push_back(static_cast<char>(code >> 8));
  out.push_back(static_cast<char>(code & 0xff));
  out += reason;
  return out;
}

TEST(WebSocketReader, AcceptsCloseCodesAPeerMaySend) {
  for (uint16_t code : {1000, 1001, 1002, 1003, 1007, 1008, 1009, 1010, 1011, 1012, 1013, 1014, 3000, 4000, 4999}) {
    auto f = feed_server(frame(Opcode::kClose, close_payload(code)));
    ASSERT_TRUE(f.status.ok()) << code;
    ASSERT_EQ(f.events.size(), 1u);
    EXPECT_EQ(f.events[0].close_code, code);
  }
}

TEST(WebSocketReader, RejectsCloseCodesReservedOrUnassigned) {
  // 1004-1006 and 1015 are never sent on the wire; below 1000 and 1016-2999 are unassigned (as Node's ws).
  for (uint16_t code : {0, 1, 999, 1004, 1005, 1006, 1015, 1016, 2000, 2999, 5000, 65535}) {
    SCOPED_TRACE(code);
    expect_error_code(feed_server(frame(Opcode::kClose, close_payload(code, "x"))), kCloseProtocolError);
  }
}

TEST(WebSocketReader, RejectsCloseReasonThatIsNotUtf8) {
  expect_error_code(feed_server(frame(Opcode::kClose, close_payload(1000, "\xff"))), kCloseInvalidData);
  auto ok = feed_server(frame(Opcode::kClose, close_payload(1000, "d\xc3\xa9j\xc3\xa0")));
  ASSERT_TRUE(ok.status.ok());
  EXPECT_EQ(ok.events[0].payload, "d\xc3\xa9j\xc3\xa0");
}

TEST(WebSocketReader, RejectsCloseOfLengthOne) {
  expect_error_code(feed_server(frame(Opcode::kClose, "\x03")), kCloseProtocolError);
}

// ---- masking ----

TEST(WebSocketReader, RejectsUnmaskedFrameWhenMaskingExpected) {
  expect_error_code(feed_server(frame(Opcode::kText, "Hello", nullptr)), kCloseProtocolError);
  expect_error_code(feed_server(frame(Opcode::kPing, "", nullptr)), kCloseProtocolError);
}

TEST(WebSocketReader, RejectsMaskedFrameWhenUnmaskedExpected) {
  Reader r(false, kMax);
  expect_error_code(feed(r, frame(Opcode::kText, "Hello")), kCloseProtocolError);
}

TEST(WebSocketReader, UnmaskedFrameRejectedAfterGoodOnes) {
  auto f = feed_server(frame(Opcode::kText, "ok") + frame(Opcode::kText, "bad", nullptr));
  expect_error_code(f, kCloseProtocolError);
  ASSERT_EQ(f.events.size(), 1u);
  EXPECT_EQ(f.events[0].payload, "ok");
}

// ---- fragmentation ----

TEST(WebSocketReader, ReassemblesRfcFragmentedText) {
  // RFC 6455 5.7: unmasked "Hel" + "lo" in two frames.
  Reader r(false, kMax);
  auto f = feed(r, bytes({0x01, 0x03, 0x48, 0x65, 0x6c, 0x80, 0x02, 0x6c, 0x6f}));
  ASSERT_TRUE(f.status.ok()) << f.status.error().message;
  ASSERT_EQ(f.events.size(), 1u);
  EXPECT_EQ(f.events[0], (Seen{Event::kMessage, false, "Hello", 0}));
}

TEST(WebSocketReader, ControlFramesMayInterleaveWithFragments) {
  Reader r(true, kMax);
  auto f = feed(r, frame(Opcode::kText, "Hel", kMask, false) + frame(Opcode::kPing, "p") +
                       frame(Opcode::kContinuation, "lo, ", kMask, false) + frame(Opcode::kPong, "q") +
                       frame(Opcode::kContinuation, "world", kMask, true) + frame(Opcode::kText, "next"));
  ASSERT_TRUE(f.status.ok()) << f.status.error().message;
  ASSERT_EQ(f.events.size(), 4u);
  EXPECT_EQ(f.events[0], (Seen{Event::kPing, false, "p", 0}));
  EXPECT_EQ(f.events[1], (Seen{Event::kPong, false, "q", 0}));
  EXPECT_EQ(f.events[2], (Seen{Event::kMessage, false, "Hello, world", 0}));
  EXPECT_EQ(f.events[3], (Seen{Event::kMessage, false, "next", 0}));
  EXPECT_FALSE(r.has_partial());
}

TEST(WebSocketReader, ReassemblesFragmentedBinary) {
  auto f = feed_server(frame(Opcode::kBinary, "\x00\x01"s, kMask, false) + frame(Opcode::kContinuation, "", kMask, false) +
                       frame(Opcode::kContinuation, "\xff"s, kMask, true));
  ASSERT_TRUE(f.status.ok());
  ASSERT_EQ(f.events.size(), 1u);
  EXPECT_EQ(f.events[0], (Seen{Event::kMessage, true, "\x00\x01\xff"s, 0}));
}

TEST(WebSocketReader, Utf8CharacterMaySpanFragments) {
  // "é" is c3 a9; each fragment alone is invalid UTF-8, the message is valid.
  auto f = feed_server(frame(Opcode::kText, "\xc3"s, kMask, false) + frame(Opcode::kContinuation, "\xa9"s));
  ASSERT_TRUE(f.status.ok()) << f.status.error().message;
  ASSERT_EQ(f.events.size(), 1u);
  EXPECT_EQ(f.events[0].payload, "\xc3\xa9");
}

TEST(WebSocketReader, RejectsContinuationWithoutStart) {
  expect_error_code(feed_server(frame(Opcode::kContinuation, "x")), kCloseProtocolError);
}

TEST(WebSocketReader, RejectsNewMessageBeforeFragmentsFinish) {
  expect_error_code(feed_server(frame(Opcode::kText, "a", kMask, false) + frame(Opcode::kText, "b")),
                    kCloseProtocolError);
  expect_error_code(feed_server(frame(Opcode::kText, "a", kMask, false) + frame(Opcode::kBinary, "b")),
                    kCloseProtocolError);
}

TEST(WebSocketReader, HasPartialTracksUnfinishedFramesAndMessages) {
  Reader r(true, kMax);
  EXPECT_FALSE(r.has_partial());
  std::string f = frame(Opcode::kText, "abc");
  ASSERT_TRUE(feed(r, f.substr(0, 3)).status.ok());
  EXPECT_TRUE(r.has_partial());
  ASSERT_TRUE(feed(r, f.substr(3)).status.ok());
  EXPECT_FALSE(r.has_partial());
  ASSERT_TRUE(feed(r, frame(Opcode::kText, "a", kMask, false)).status.ok());
  EXPECT_TRUE(r.has_partial());
  ASSERT_TRUE(feed(r, frame(Opcode::kContinuation, "b")).status.ok());
  EXPECT_FALSE(r.has_partial());
}

// ---- split input ----

std::string mixed_stream() {
  return frame(Opcode::kText, "Hello") + frame(Opcode::kBinary, std::string(300, '\x01')) +
         frame(Opcode::kText, "frag", kMask, false) + frame(Opcode::kPing, "ping") +
         frame(Opcode::kContinuation, "mented \xc3", kMask, false) + frame(Opcode::kContinuation, "\xa9") +
         frame(Opcode::kBinary, std::string(70000, 'x')) + frame(Opcode::kClose, "\x03\xe8" "done"s);
}

TEST(WebSocketReader, ByteByByteFeedingGivesTheSameEvents) {
  auto whole = feed_server(mixed_stream());
  ASSERT_TRUE(whole.status.ok()) << whole.status.error().message;
  ASSERT_EQ(whole.events.size(), 6u);
  EXPECT_EQ(whole.events[3], (Seen{Event::kMessage, false, "fragmented \xc3\xa9", 0}));
  EXPECT_EQ(whole.events[5], (Seen{Event::kClose, false, "done", kCloseNormal}));
  auto bytewise = feed_server(mixed_stream(), 1);
  ASSERT_TRUE(bytewise.status.ok()) << bytewise.status.error().message;
  EXPECT_EQ(bytewise.events, whole.events);
}

TEST(WebSocketReader, AnyChunkSizeGivesTheSameEvents) {
  auto whole = feed_server(mixed_stream());
  for (size_t chunk : {2, 3, 5, 7, 13, 127, 1000, 65536}) {
    auto f = feed_server(mixed_stream(), chunk);
    ASSERT_TRUE(f.status.ok()) << chunk;
    EXPECT_EQ(f.events, whole.events) << chunk;
  }
}

TEST(WebSocketReader, StopsWhenHandlerReturnsFalse) {
  Reader r(true, kMax);
  std::string in = frame(Opcode::kText, "a") + frame(Opcode::kText, "b");
  int calls = 0;
  auto st = r.feed(in.data(), in.size(), [&](const Event&) {
    ++calls;
    return false;
  });
  EXPECT_TRUE(st.ok());
  EXPECT_EQ(calls, 1);
}

// ---- malformed frames ----

TEST(WebSocketReader, RejectsReservedBits) {
  for (uint8_t rsv : {0x40, 0x20, 0x10}) {
    expect_error_code(feed_server(frame(Opcode::kText, "x", kMask, true, rsv)), kCloseProtocolError);
    expect_error_code(feed_server(frame(Opcode::kPing, "", kMask, true, rsv)), kCloseProtocolError);
  }
}

TEST(WebSocketReader, RejectsUnknownOpcodes) {
  for (uint8_t op : {3, 4, 5, 6, 7, 0xb, 0xc, 0xd, 0xe, 0xf}) {
    SCOPED_TRACE(static_cast<int>(op));
    expect_error_code(feed_server(frame(static_cast<Opcode>(op), "x")), kCloseProtocolError);
  }
}

TEST(WebSocketReader, RejectsOversizedControlFrames) {
  expect_error_code(feed_server(frame(Opcode::kPing, std::string(126, 'p'))), kCloseProtocolError);
  expect_error_code(feed_server(frame(Opcode::kClose, "\x03\xe8" + std::string(124, 'r'))), kCloseProtocolError);
  // Rejected from the header alone, before the payload arrives.
  std::string header = frame(Opcode::kPong, std::string(200, 'p')).substr(0, 8);
  expect_error_code(feed_server(header), kCloseProtocolError);
}

TEST(WebSocketReader, RejectsFragmentedControlFrames) {
  expect_error_code(feed_server(frame(Opcode::kPing, "p", kMask, false)), kCloseProtocolError);
  expect_error_code(feed_server(frame(Opcode::kClose, "", kMask, false)), kCloseProtocolError);
}

TEST(WebSocketReader, RejectsLengthWithTopBitSet) {
  std::string f = bytes({0x82, 0xff, 0x80, 0, 0, 0, 0, 0, 0, 1}) + std::string(reinterpret_cast<const char*>(kMask), 4);
  Reader r(true, UINT64_MAX);
  expect_error_code(feed(r, f), kCloseProtocolError);
}

TEST(WebSocketReader, MessageAtMaxSizeIsAccepted) {
  auto f = feed_server(frame(Opcode::kBinary, std::string(100, 'x')), 0, 100);
  ASSERT_TRUE(f.status.ok());
  ASSERT_EQ(f.events.size(), 1u);
  auto frag = feed_server(frame(Opcode::kText, std::string(60, 'x'), kMask, false) +
                              frame(Opcode::kContinuation, std::string(40, 'y')),
                          0, 100);
  ASSERT_TRUE(frag.status.ok());
  ASSERT_EQ(frag.events.size(), 1u);
  EXPECT_EQ(frag.events[0].payload.size(), 100u);
}

TEST(WebSocketReader, RejectsMessageOverMaxSize) {
  expect_error_code(feed_server(frame(Opcode::kBinary, std::string(101, 'x')), 0, 100), kCloseTooBig);
  // Rejected from the header alone: a huge declared length is never buffered.
  std::string header = bytes({0x82, 0xff, 0, 0, 0, 1, 0, 0, 0, 0}) + std::string(reinterpret_cast<const char*>(kMask), 4);
  expect_error_code(feed_server(header, 0, 100), kCloseTooBig);
}

TEST(WebSocketReader, RejectsFragmentedMessageOverMaxSize) {
  expect_error_code(feed_server(frame(Opcode::kText, std::string(60, 'x'), kMask, false) +
                                    frame(Opcode::kContinuation, std::string(41, 'y')),
                                0, 100),
                    kCloseTooBig);
}

TEST(WebSocketReader, RejectsInvalidUtf8Text) {
  expect_error_code(feed_server(frame(Opcode::kText, "\xff")), kCloseInvalidData);
  expect_error_code(feed_server(frame(Opcode::kText, "\xc3")), kCloseInvalidData);             // truncated
  expect_error_code(feed_server(frame(Opcode::kText, "\xc0\xaf")), kCloseInvalidData);         // overlong
  expect_error_code(feed_server(frame(Opcode::kText, "\xed\xa0\x80")), kCloseInvalidData);     // surrogate
  expect_error_code(feed_server(frame(Opcode::kText, "ok\xc3", kMask, false) + frame(Opcode::kContinuation, "x")),
                    kCloseInvalidData);
}

TEST(WebSocketReader, BinaryMessagesAreNotUtf8Checked) {
  auto f = feed_server(frame(Opcode::kBinary, "\xff\xc3"s) + frame(Opcode::kBinary, "\xc3", kMask, false) +
                       frame(Opcode::kContinuation, "\xff"));
  ASSERT_TRUE(f.status.ok());
  EXPECT_EQ(f.events.size(), 2u);
}

}  // namespace
}  // namespace siomq::ws

namespace siomq::ws {
namespace {

// Issue 12 item 5: a large frame arriving in 64 KiB reads is kept, not copied out again on every read
// (64 MiB took tens of seconds, quadratic); it arrives whole and once.
TEST(WebSocketReader, ALargeFrameInSmallReadsCostsLinearTime) {
  const std::string payload(64 << 20, 'x');
  std::string wire = frame(Opcode::kBinary, payload);
  Reader reader(true, payload.size());
  size_t messages = 0, size = 0;
  auto start = std::chrono::steady_clock::now();
  for (size_t at = 0; at < wire.size(); at += 65536) {
    size_t n = std::min<size_t>(65536, wire.size() - at);
    auto st = reader.feed(wire.data() + at, n, [&](const Event& ev) {
      ++messages;
      size = ev.payload.size();
      return true;
    });
    ASSERT_TRUE(st.ok());
  }
  auto took = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(messages, 1u);
  EXPECT_EQ(size, payload.size());
  EXPECT_FALSE(reader.has_partial());
  EXPECT_LT(took, std::chrono::seconds(5)) << "generous: linear work is well under a second";
}

}  // namespace
}  // namespace siomq::ws
