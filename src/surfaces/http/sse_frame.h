// One Server-Sent Events frame of HTTP publish (tyo-mq §9): `id: <id>\nevent: message\ndata:
// {"event","data","producer",[content_type|enc|to]}\n\n`, made from the delivery object the tyo-mq
// surface routes ({event, message, from, [enc], [to], [content_type]}). Pure functions.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace siomq::surfaces::http {

// The frame, or nullopt when `payload` is not a delivery object. An id that is empty or holds a
// character that would break the frame (a control character) is replaced by "m-" + 24 hex.
std::optional<std::string> sse_frame(std::string_view id, std::string_view payload);
// The delivery object's `event`, exactly as produced; nullopt when it has none.
std::optional<std::string> delivery_event(std::string_view payload);
// Whether `id` can stand in an `id:` line as it is.
bool frame_safe_id(std::string_view id);

}  // namespace siomq::surfaces::http
