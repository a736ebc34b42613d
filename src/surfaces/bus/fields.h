// The bus's own request pieces (bus.md §1, §8.19): the request object (the event's first argument, which
// must be an object), message data (a binary attachment or a JSON string) and headers (an object of
// strings). Field-by-field reading is wire/json_fields.h. Pure, any thread.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "wire/json_fields.h"
#include "wire/result.h"

namespace siomq::surfaces::bus {

using json::Fields;
using json::kBadRequest;
using json::parse_integer;

// The request object of an event: its first argument after the name, which must be an object (§8.19:
// only `data` may be a JSON string, the request itself may not).
Result<std::string_view> request_object(std::string_view args);

// The 400 answer for a field: "<name>: <why>".
Error bad(std::string_view name, std::string_view why);

// A message's data (§1): a binary attachment placeholder, or a JSON string whose UTF-8 bytes are the data.
Result<std::string> read_data(std::string_view raw, std::span<const std::string> attachments);
// A header (§1): an object of string values, at most kMaxHeaderEntries entries and kMaxHeaderBytes of
// text. Returned as canonical JSON text, empty for an empty object (keys as given, the last of a repeated
// key kept, in first-seen order); `msg_id` gets the value of a `Msg-Id` key (any case).
inline constexpr size_t kMaxHeaderEntries = 256;
inline constexpr size_t kMaxHeaderBytes = 64 * 1024;
// msg_id and Msg-Id: longer is 400 on stream.pub; a captured core pub with a longer one is stored
// without dedup.
inline constexpr size_t kMaxMsgIdBytes = 256;
Result<std::string> read_header(std::string_view raw, std::optional<std::string>* msg_id = nullptr);

}  // namespace siomq::surfaces::bus
