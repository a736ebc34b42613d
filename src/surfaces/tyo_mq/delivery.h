// How the tyo-mq surface puts the engine's deliveries and presence changes on the wire (§4.2, §4.3, §5.2):
// a copy goes out as CONSUME-<key>, in CONSUME_CHUNK pieces when it is long; an ACK-mode copy carries
// msgId, msg_id and delivery_attempt; presence changes are CONNECT-<id>, DISCONNECT-<id>,
// SUBSCRIBE-TO-<id> and ERROR events. Pure functions of their arguments; any thread.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "broker/endpoint.h"
#include "surfaces/tyo_mq/frames.h"

namespace siomq::surfaces {

// Deliveries longer than this (in UTF-16 code units, as JavaScript measures) go out as CONSUME_CHUNK pieces.
inline constexpr size_t kChunkThreshold = 262144;

// The frames of one delivery, shared by the tyo-mq sockets a fan-out reaches.
struct TyoMqEncoding : broker::DeliveryEncoding {
  std::vector<FramesPtr> frames;
};
std::shared_ptr<const TyoMqEncoding> encode_delivery(const broker::Delivery& delivery);

// The delivery object of an ACK-mode copy: the stored one plus msgId, msg_id and delivery_attempt.
std::string with_ack_fields(std::string_view payload, std::string_view id, int attempt);

// The event name and JSON payload of a presence change.
std::pair<std::string, std::string> presence_event(const broker::Presence& presence);

// "msg-" base36(now ms) "-" 12 hex digits, as the reference names stored copies (QueueOptions::new_message_id):
// random, but for the last one, which is `shard` (0 .. 15) when that is not -1.
std::string new_message_id(int shard = -1);

}  // namespace siomq::surfaces
