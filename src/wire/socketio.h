// Socket.IO packets (protocol v5, and the v4 dialect of Socket.IO v2 clients). Pure codec.
//
// A packet travels as one Engine.IO text message "<type>[<n>-][<nsp>,][<ack id>][<json>]", followed,
// for BINARY_EVENT / BINARY_ACK, by <n> Engine.IO binary messages: the attachments, referenced from the
// JSON by {"_placeholder":true,"num":i}. The JSON is kept as raw text: it is validated here and parsed
// again only by whoever needs its values, and never re-serialised on the way through.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "wire/result.h"

namespace siomq::json {
class Outline;
}

namespace siomq::sio {

enum class PacketType : uint8_t {
  kConnect = 0,
  kDisconnect = 1,
  kEvent = 2,
  kAck = 3,
  kConnectError = 4,
  kBinaryEvent = 5,
  kBinaryAck = 6,
};

// Most attachments one packet may declare; more is treated as malformed input.
inline constexpr size_t kMaxAttachments = 10000;
// What one attachment is charged beyond its bytes in a Decoder's budget (its string and vector slot).
inline constexpr size_t kAttachmentOverhead = 64;

struct Packet {
  PacketType type = PacketType::kEvent;
  std::string nsp = "/";
  std::optional<uint64_t> id;
  std::string data;  // raw JSON; empty when the packet has none
  std::string event;  // EVENT / BINARY_EVENT from a Decoder: the event name
  size_t attachment_count = 0;
  std::vector<std::string> attachments;
};

// Parses the text part of a packet. Binary packets come back with attachment_count set and no
// attachments yet; feed them to a Decoder to complete and validate them.
Result<Packet> decode_text(std::string_view text);

// Checks the JSON of a complete packet against its type (EVENT: non-empty array starting with a string,
// ACK: array, CONNECT: object or none, DISCONNECT: none, CONNECT_ERROR: object or string), and that every
// placeholder names an attachment that exists.
Status validate(const Packet& packet);

// Whether every {"_placeholder":true,"num":N} in the JSON value `json` names one of `attachments`
// attachments (0 <= N < attachments, a whole number), as validate() checks a binary packet's; an error
// for JSON that does not parse too. For binary data that reaches this node otherwise (a relayed message).
Status check_attachment_placeholders(std::string_view json, size_t attachments);

// The event name of a valid EVENT/BINARY_EVENT packet.
std::string event_name(const Packet& packet);

// Reassembles packets from a stream of Engine.IO messages (one per connection). A packet, its text and
// every attachment together (each attachment charged kAttachmentOverhead besides its bytes), must fit in
// `max_packet_bytes`: a client cannot hold more than that in a half-received packet by declaring many
// attachments of max_payload each.
class Decoder {
 public:
  explicit Decoder(size_t max_packet_bytes = SIZE_MAX) : max_bytes_(max_packet_bytes) {}
  // Returns a complete, validated packet, nullopt while attachments are still expected, or an error.
  // Given an `outline`, a text EVENT packet is validated in one pass that notes its elements there (read
  // them against the packet's `data`); any other packet leaves it describing nothing.
  Result<std::optional<Packet>> feed_text(std::string_view text, json::Outline* outline = nullptr);
  Result<std::optional<Packet>> feed_binary(std::string bytes);
  bool awaiting_attachments() const { return pending_ != nullptr; }

 private:
  std::unique_ptr<Packet> pending_;  // allocated while attachments are awaited (rare: a pointer idle)
  size_t max_bytes_;
  size_t pending_bytes_ = 0;
};

// Appends the text part of a packet to `out` (the caller may have written the Engine.IO type digit first).
// `data` must already be valid JSON (or empty); for binary types `attachment_count` is written as "<n>-".
void append_text(std::string& out, PacketType type, std::string_view nsp, std::optional<uint64_t> id,
                 std::string_view data, size_t attachment_count = 0);
std::string encode_text(const Packet& packet);

// Appends `s` as a JSON string literal, escaped as JSON.stringify does.
void append_json_string(std::string& out, std::string_view s);

}  // namespace siomq::sio
