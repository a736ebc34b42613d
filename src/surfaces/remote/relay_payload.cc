#include "surfaces/remote/relay_payload.h"

#include <optional>

#include "wire/base64.h"
#include "wire/json_spans.h"
#include "wire/socketio.h"

namespace siomq::remote {
namespace {

Error too_large(size_t max_bytes) { return make_error("payload larger than " + std::to_string(max_bytes) + " bytes", 413); }

// The attachment index of a binary placeholder {"_placeholder":true,"num":N}; nullopt for anything else.
std::optional<size_t> placeholder_index(std::string_view value, size_t attachments) {
  if (value.empty() || value.front() != '{') return std::nullopt;
  auto members = json_spans::object_members(value);
  if (!members) return std::nullopt;
  bool flagged = false;
  std::optional<size_t> num;
  for (const auto& m : *members) {
    if (m.key == "_placeholder") flagged = m.value == "true";
    if (m.key == "num") {
      size_t n = 0;
      bool digits = !m.value.empty() && m.value.size() <= 6;
      for (char c : m.value) {
        if (c < '0' || c > '9') digits = false;
        else n = n * 10 + static_cast<size_t>(c - '0');
      }
      num = digits ? std::optional<size_t>(n) : std::nullopt;
    }
  }
  if (!flagged || !num || *num >= attachments) return std::nullopt;
  return num;
}

// The bytes of a frame argument: an attachment, or an object whose `frame` is an attachment or base64.
Result<std::string> frame_bytes(std::string_view arg, std::span<const std::string> attachments, size_t max_bytes) {
  if (auto i = placeholder_index(arg, attachments.size())) {
    if (attachments[*i].size() > max_bytes) return too_large(max_bytes);
    return attachments[*i];
  }
  if (arg.empty() || arg.front() != '{') return make_error("a frame is binary, or an object with a frame", 400);
  auto members = json_spans::object_members(arg);
  if (!members) return make_error("a frame is binary, or an object with a frame", 400);
  for (const auto& m : *members) {
    if (m.key != "frame") continue;
    if (auto i = placeholder_index(m.value, attachments.size())) {
      if (attachments[*i].size() > max_bytes) return too_large(max_bytes);
      return attachments[*i];
    }
    if (m.value.empty() || m.value.front() != '"') break;
    // Base64 of n bytes is 4⌈n/3⌉ characters: refuse what cannot fit before decoding it.
    if (m.value.size() - 2 > base64::encoded_size(max_bytes) + 64) return too_large(max_bytes);
    auto text = json_spans::unescape(m.value);
    if (!text) break;
    auto bytes = base64::decode(*text);
    if (!bytes) return make_error("frame is not valid base64", 400);
    if (bytes->size() > max_bytes) return too_large(max_bytes);
    return std::move(*bytes);
  }
  return make_error("a frame is binary, or an object with a frame", 400);
}

}  // namespace

Result<RelayPayload> relay_payload(std::string_view event, std::string_view json, std::span<const std::string> attachments,
                                   bool binary, size_t max_bytes) {
  auto args = json_spans::array_elements(json);
  if (!args || args->empty()) return make_error("malformed event", 400);
  RelayPayload out;
  if (binary) {
    if (args->size() < 2) return make_error("a frame is binary, or an object with a frame", 400);
    auto bytes = frame_bytes((*args)[1], attachments, max_bytes);
    if (!bytes) return bytes.error();
    out.json = "[";
    sio::append_json_string(out.json, event);
    out.json += ",{\"_placeholder\":true,\"num\":0}]";
    out.attachments.push_back(std::move(*bytes));
    return out;
  }
  size_t total = json.size();
  for (const auto& a : attachments) total += a.size();
  if (total > max_bytes) return too_large(max_bytes);
  if (args->size() == 1) {
    out.json = "[";
    sio::append_json_string(out.json, event);
    out.json += ",{}]";
    return out;
  }
  out.json = json;
  out.attachments.assign(attachments.begin(), attachments.end());
  return out;
}

}  // namespace siomq::remote
