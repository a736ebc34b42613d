// Reading and writing the JSON documents the cluster keeps in Redis (shared_requests, shared_keys):
// members read by type, never trusting the shape; text written compact, bad UTF-8 replaced rather than
// thrown on (the documents are validated before they are parsed, so that is a last resort).
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <string_view>

#include "wire/js_json.h"
#include "wire/result.h"

namespace siomq::cluster {

inline std::string document_text(const nlohmann::json& j) {
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// A document read from Redis (nullopt: the key does not exist yet, an empty object): at most `max_bytes`,
// validated whole (js::validate: UTF-8, depth, linear time, no recursion) before it is parsed, and a JSON
// object. 503 otherwise, the message starting with `what_is` ("the cluster's key directory is"): a node
// then refuses the operation rather than overwrite what it cannot read.
inline Result<nlohmann::json> parse_document(const std::optional<std::string>& text, size_t max_bytes, std::string_view what_is) {
  if (!text) return nlohmann::json::object();
  if (text->size() > max_bytes) return make_error(std::string(what_is) + " larger than this node reads", 503);
  if (!js::validate(*text)) return make_error(std::string(what_is) + " not JSON", 503);
  nlohmann::json doc = nlohmann::json::parse(*text, nullptr, false);
  if (!doc.is_object()) return make_error(std::string(what_is) + " not a JSON object", 503);
  return doc;
}

// A note read from a channel: at most `max_bytes`, validated whole, a JSON object; nullopt otherwise.
inline std::optional<nlohmann::json> parse_note(std::string_view text, size_t max_bytes) {
  if (text.size() > max_bytes || !js::validate(text)) return std::nullopt;
  nlohmann::json note = nlohmann::json::parse(text, nullptr, false);
  if (!note.is_object()) return std::nullopt;
  return note;
}

// The string member `key` of `object`; null when absent or not a string.
inline const std::string* string_member(const nlohmann::json& object, const char* key) {
  auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get_ptr<const std::string*>() : nullptr;
}

}  // namespace siomq::cluster
