// Engine.IO packets and polling payloads, protocol revisions 3 and 4. Pure codec: bytes in, values out.
//
// On a WebSocket an Engine.IO packet is one frame: a text frame carries "<type digit><data>", a binary
// frame carries a message's bytes (v3 prefixes them with the type byte 4). Over HTTP long-polling many
// packets travel in one body: v4 separates them with 0x1e and writes binary ones as "b<base64>"; v3 writes
// "<length>:<packet>" with the length counted in UTF-16 code units, or uses a binary framing.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "wire/result.h"

namespace siomq::eio {

enum class PacketType : uint8_t { kOpen = 0, kClose = 1, kPing = 2, kPong = 3, kMessage = 4, kUpgrade = 5, kNoop = 6 };

// A decoded packet. For a message, `data` is the text or the binary bytes.
struct Packet {
  PacketType type = PacketType::kMessage;
  bool binary = false;
  std::string data;
};

// A packet ready for the wire, as a WebSocket frame would carry it: `bytes` of a text packet start with
// the type digit; a binary packet is always a message and `bytes` are its raw contents.
struct Frame {
  bool binary = false;
  std::string_view bytes;
};

// Decodes a text packet ("4hello", "2probe").
Result<Packet> decode_text(std::string_view text);
// Decodes a binary WebSocket frame; protocol 3 frames carry a leading type byte.
Result<Packet> decode_binary(std::string_view bytes, int protocol);

// What each packet of a polling body is charged beyond its bytes: what a decoded Packet costs.
inline constexpr size_t kPayloadPacketOverhead = 64;

// Decodes a polling POST body. `binary_body` is true when the request's content type is
// application/octet-stream (the v3 binary payload framing). The body's bytes plus
// kPayloadPacketOverhead per packet must stay within `max_cost`, so a body of thousands of two-byte
// no-op packets cannot decode into many times its size.
Result<std::vector<Packet>> decode_payload(std::string_view body, int protocol, bool binary_body,
                                           size_t max_cost = SIZE_MAX);

// Encodes frames as one polling response body (always the text framing; binary as base64).
std::string encode_payload(std::span<const Frame> frames, int protocol);

// The number of UTF-16 code units in a UTF-8 string (JavaScript's String.length); v3 payload lengths.
size_t utf16_length(std::string_view utf8);

}  // namespace siomq::eio
