// What a relayed event carries to the other side of a session, built from what the sender sent.
//
// Opaque (every rule but binary ones): the sender's packet data — `["event", arg, ...]`, binary
// placeholders included — goes out verbatim with the same attachments; the ack id is not forwarded (the
// sender's callback is never answered: functions cannot cross the relay). An event without arguments goes
// out as `["event", {}]`, as the reference relays it.
//
// Binary (frame): the first argument — a binary attachment, or an object whose `frame` is an attachment
// or base64 text — goes out as `["event", <one attachment>]`, byte for byte; any other argument is left
// behind. Base64 is decoded strictly (standard alphabet, padding).
//
// Pure; linear in the packet's size.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "surfaces/remote/relay_rules.h"
#include "wire/result.h"

namespace siomq::remote {

struct RelayPayload {
  std::string json;  // the packet data: ["event", ...]
  std::vector<std::string> attachments;
};

// `json` is the sender's packet data (valid JSON, event name first) and `attachments` its binary
// attachments. Fails (code 413) past `max_bytes` (the JSON and the attachments of an opaque event, the
// frame's bytes of a binary one), and (code 400) for a binary event without a frame.
Result<RelayPayload> relay_payload(std::string_view event, std::string_view json, std::span<const std::string> attachments,
                                   bool binary, size_t max_bytes);

}  // namespace siomq::remote
