// The bus's wire shapes (bus.md §1, §4): request answers {ok:true,...} / {ok:false,error:{code,message}},
// `msg` deliveries and Message objects, with message data always as binary attachments (§8.21). The
// attachments are the messages' own bytes, shared (no copy per recipient). Pure, any thread.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "broker/bus_message.h"
#include "net/out_frame.h"

namespace siomq::surfaces::bus {

using Bytes = std::shared_ptr<const std::string>;
using Frames = std::shared_ptr<const std::vector<net::OutFrame>>;

// The data of `message` as an attachment that shares the message.
inline Bytes data_of(const broker::BusMessagePtr& message) { return Bytes(message, &message->data); }

// {"ok":false,"error":{"code":N,"message":"..."}}.
std::string error_json(int code, std::string_view message);

// A text frame and its binary frames.
Frames frames_of(std::string text, std::vector<Bytes> attachments);
// The text frame answering ack id `ack_id` on namespace `nsp` with one argument, `json`; its binary
// frames (`attachments` of them) follow it.
std::string ack_text(std::string_view nsp, uint64_t ack_id, std::string_view json, size_t attachments = 0);
// The same with {"ok":true[,<fields>]} as the argument: `fields` is the JSON text of members
// ("\"sid\":\"1\""), or empty.
std::string ok_text(std::string_view nsp, uint64_t ack_id, std::string_view fields, size_t attachments = 0);
// The frames of the event `event` with one argument, `json`.
Frames event_frames(std::string_view nsp, std::string_view event, std::string_view json,
                    std::vector<Bytes> attachments = {});

// The `msg` delivery of `message` to the subscription `sid` (its data as attachment 0).
Frames msg_frames(const broker::BusMessagePtr& message, std::string_view sid);
// Appends a Message object (§4: {stream?, subject, data, header?, reply?, seq?, delivered?, timestamp_ms?})
// whose data is placeholder `num`.
void append_message(std::string& out, const broker::BusMessage& message, size_t num, bool with_reply = false);

}  // namespace siomq::surfaces::bus
