// The encoded frames of the tyo-mq surface's outgoing events and ack answers, and the JSON text of its
// ERROR event. Pure functions; the frames may be sent from any thread.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "net/out_frame.h"
#include "surfaces/reply.h"  // error_reply, the failure answer every surface sends

namespace siomq::surfaces {

// Frames encoded once and shared by every socket they go to; immutable, so any thread may hold them.
using FramesPtr = std::shared_ptr<const std::vector<net::OutFrame>>;

// Frames sendable from any thread: an event, an ack answer.
FramesPtr event_frames(std::string_view event, std::string_view payload, std::vector<std::string> attachments = {});
FramesPtr ack_frames(uint64_t ack_id, std::string_view json_array);
// {message, code}: ERROR's payload.
std::string error_object(int code, std::string_view message);

}  // namespace siomq::surfaces
