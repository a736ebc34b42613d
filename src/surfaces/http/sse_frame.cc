#include "surfaces/http/sse_frame.h"

#include <nlohmann/json.hpp>

#include "auth/hmac.h"

namespace siomq::surfaces::http {
using nlohmann::json;

bool frame_safe_id(std::string_view id) {
  if (id.empty() || id.size() > 256) return false;
  for (char c : id) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) return false;
  }
  return true;
}

std::optional<std::string> sse_frame(std::string_view id, std::string_view payload) {
  json d = json::parse(payload, nullptr, false);
  if (!d.is_object()) return std::nullopt;
  json data = json::object();
  data["event"] = d.value("event", json());
  data["data"] = d.contains("message") ? d["message"] : json();
  data["producer"] = d.value("from", json());
  for (const char* k : {"content_type", "enc", "to"}) {
    if (d.contains(k)) data[k] = d[k];
  }
  std::string frame = "id: ";
  frame += frame_safe_id(id) ? std::string(id) : "m-" + auth::random_hex(12);
  frame += "\nevent: message\ndata: ";
  frame += data.dump(-1, ' ', false, json::error_handler_t::replace);
  frame += "\n\n";
  return frame;
}

std::optional<std::string> delivery_event(std::string_view payload) {
  json d = json::parse(payload, nullptr, false);
  if (!d.is_object()) return std::nullopt;
  auto it = d.find("event");
  if (it == d.end() || !it->is_string()) return std::nullopt;
  return it->get<std::string>();
}

}  // namespace siomq::surfaces::http
