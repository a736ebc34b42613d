// The tyo-mq PING reply: JSON.stringify({...payload, pong:"PONG", timestamp}), built as Node builds it.
#pragma once

#include <chrono>
#include <string>
#include <string_view>

namespace siomq::surfaces {

// `args` is the event's data array (["PING", payload?]); `timestamp` an ISO-8601 string.
std::string ping_reply(std::string_view args, std::string_view timestamp);

// Date.prototype.toISOString: "2026-12-02T13:35:15.123Z".
std::string iso_timestamp(std::chrono::system_clock::time_point t);

}  // namespace siomq::surfaces
