#include "cluster/shared_settings.h"

#include "wire/js_json.h"
#include "wire/json_spans.h"
#include "wire/socketio.h"

namespace siomq::cluster {

std::string encode_shared_settings(std::string_view document, std::string_view node_id, int64_t unix_ms) {
  std::string out;
  out.reserve(document.size() + node_id.size() + 64);
  out.append("{\"settings\":").append(document).append(",\"node_id\":");
  sio::append_json_string(out, node_id);
  out.append(",\"updated_at\":\"").append(js::iso_date(unix_ms)).append("\"}");
  return out;
}

std::optional<SharedSettings> decode_shared_settings(std::string_view text) {
  if (text.size() > kMaxSettingsBytes || !js::validate(text)) return std::nullopt;
  auto members = json_spans::object_members(text);
  if (!members) return std::nullopt;
  SharedSettings out;
  bool found = false;
  for (const auto& m : *members) {  // the last of duplicates wins, as JSON.parse has it
    if (m.key == "settings") {
      found = !m.value.empty() && m.value.front() == '{';
      if (found) out.document = std::string(m.value);
    } else if (m.key == "node_id") {
      auto s = json_spans::unescape(m.value);
      out.node_id = s ? std::move(*s) : std::string();
    }
  }
  if (!found) return std::nullopt;
  return out;
}

std::string encode_settings_note(int64_t revision, std::string_view node_id) {
  return "{\"revision\":" + std::to_string(revision) + settings_note_tail(node_id);
}

std::string settings_note_tail(std::string_view node_id) {
  std::string out = ",\"node_id\":";
  sio::append_json_string(out, node_id);
  out.push_back('}');
  return out;
}

std::optional<std::string> settings_note_author(std::string_view text) {
  if (text.size() > 4096 || !js::validate(text)) return std::nullopt;
  auto members = json_spans::object_members(text);
  if (!members) return std::nullopt;
  for (auto it = members->rbegin(); it != members->rend(); ++it) {
    if (it->key != "node_id") continue;
    if (auto s = json_spans::unescape(it->value)) return std::move(*s);
    return std::nullopt;
  }
  return std::nullopt;
}

}  // namespace siomq::cluster
