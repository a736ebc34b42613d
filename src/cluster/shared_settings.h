// The settings document shared by a cluster's nodes (tyo-mq §10), as the texts Redis holds:
//   <c>:settings           {"settings":{...},"node_id":N,"updated_at":ISO}
//   <c>:settings:changed   {"revision":R,"node_id":N}
// Readers take text from Redis as hostile input: validated whole (simdjson, iterative), bounded in size.
// Pure; any thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace siomq::cluster {

// The largest shared settings document a node reads or writes.
inline constexpr size_t kMaxSettingsBytes = size_t{64} << 20;

struct SharedSettings {
  std::string document;  // the `settings` object, as JSON text
  std::string node_id;   // who wrote it ("" when absent)
};

// <c>:settings's value for `document` (a JSON object's text), written by `node_id` at `unix_ms`.
std::string encode_shared_settings(std::string_view document, std::string_view node_id, int64_t unix_ms);
// The value read back; nullopt when it is not JSON, too large, or has no `settings` object.
std::optional<SharedSettings> decode_shared_settings(std::string_view text);

// The <c>:settings:changed note.
std::string encode_settings_note(int64_t revision, std::string_view node_id);
// What follows the revision in that note (`,"node_id":N}`): the script that publishes the settings
// writes the note itself, with the revision it got (Cluster).
std::string settings_note_tail(std::string_view node_id);
// The node that wrote a note; nullopt when the note is not one.
std::optional<std::string> settings_note_author(std::string_view text);

}  // namespace siomq::cluster
