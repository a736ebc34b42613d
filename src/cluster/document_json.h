// Reading and writing the JSON documents the cluster keeps in Redis (shared_requests, shared_keys):
// members read by type, never trusting the shape; text written compact, bad UTF-8 replaced rather than
// thrown on (the documents are validated before they are parsed, so that is a last resort).
#pragma once

#include <nlohmann/json.hpp>

#include <string>

namespace siomq::cluster {

inline std::string document_text(const nlohmann::json& j) {
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// The string member `key` of `object`; null when absent or not a string.
inline const std::string* string_member(const nlohmann::json& object, const char* key) {
  auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get_ptr<const std::string*>() : nullptr;
}

}  // namespace siomq::cluster
