// The wire shapes of streams and consumers (bus.md §5): StreamMeta, StreamState, ConsumerInfo, and a pull's
// messages (each Message's data a binary attachment, in order). Pure, any thread.
#pragma once

#include <string>
#include <vector>

#include "broker/streams.h"
#include "surfaces/bus/answers.h"

namespace siomq::surfaces::bus {

std::string stream_meta_json(const broker::StreamInfo& info);
std::string stream_state_json(const broker::StreamInfo& info);
std::string consumer_info_json(const broker::ConsumerInfo& info);
// "messages":[Message,...] with placeholders 0..n-1, and the attachments they name.
std::string messages_json(const std::vector<broker::BusMessagePtr>& messages, std::vector<Bytes>& attachments);

}  // namespace siomq::surfaces::bus
