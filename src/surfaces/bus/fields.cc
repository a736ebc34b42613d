#include "surfaces/bus/fields.h"

#include <unordered_map>
#include <vector>

#include "wire/json_spans.h"
#include "wire/socketio.h"

namespace siomq::surfaces::bus {
namespace {

bool ascii_iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    char x = a[i], y = b[i];
    if (x >= 'A' && x <= 'Z') x = static_cast<char>(x + 32);
    if (y >= 'A' && y <= 'Z') y = static_cast<char>(y + 32);
    if (x != y) return false;
  }
  return true;
}

}  // namespace

Error bad(std::string_view name, std::string_view why) {
  return Error{kBadRequest, std::string(name) + ": " + std::string(why)};
}

Result<std::string_view> request_object(std::string_view args) {
  auto elements = json_spans::array_elements(args);
  if (!elements || elements->size() < 2) return Error{kBadRequest, "request: a payload object is required"};
  std::string_view payload = (*elements)[1];
  if (payload.empty() || payload.front() != '{') return Error{kBadRequest, "request: the payload must be an object"};
  return payload;
}

Result<std::string> read_data(std::string_view raw, std::span<const std::string> attachments) {
  if (raw.empty()) return bad("data", "is required");
  if (raw.front() == '"') {
    auto s = json_spans::unescape(raw);
    if (!s) return bad("data", "must be binary or a string");
    return std::move(*s);
  }
  if (raw.front() == '{') {
    auto members = json_spans::object_members(raw);
    if (members && members->size() == 2) {
      bool placeholder = false;
      std::optional<int64_t> num;
      for (const auto& m : *members) {
        if (m.key == "_placeholder") placeholder = m.value == "true";
        if (m.key == "num") num = parse_integer(m.value);
      }
      if (placeholder && num && *num >= 0 && static_cast<size_t>(*num) < attachments.size())
        return attachments[static_cast<size_t>(*num)];
    }
  }
  return bad("data", "must be binary or a string");
}

Result<std::string> read_header(std::string_view raw, std::optional<std::string>* msg_id) {
  if (raw.front() != '{') return bad("header", "must be an object of strings");
  if (raw.size() > kMaxHeaderBytes) return bad("header", "is longer than 65536 bytes");
  auto members = json_spans::object_members(raw);
  if (!members) return bad("header", "must be an object of strings");
  if (members->size() > kMaxHeaderEntries) return bad("header", "has more than 256 entries");
  std::vector<std::pair<std::string, std::string>> entries;
  std::unordered_map<std::string_view, size_t> at;
  entries.reserve(members->size());
  for (auto& m : *members) {
    if (m.key.empty()) return bad("header", "has an empty key");
    if (m.value.empty() || m.value.front() != '"') return bad("header", "values must be strings");
    auto value = json_spans::unescape(m.value);
    if (!value) return bad("header", "values must be strings");
    if (msg_id && ascii_iequals(m.key, "Msg-Id")) *msg_id = *value;
    entries.emplace_back(std::move(m.key), std::move(*value));
  }
  // The last of a repeated key wins, in the place it first had.
  std::vector<size_t> order;
  for (size_t i = 0; i < entries.size(); ++i) {
    auto [it, fresh] = at.try_emplace(entries[i].first, i);
    if (fresh) order.push_back(i);
    else entries[it->second].second = std::move(entries[i].second);
  }
  if (order.empty()) return std::string();
  std::string out = "{";
  for (size_t i : order) {
    if (out.size() > 1) out.push_back(',');
    sio::append_json_string(out, entries[i].first);
    out.push_back(':');
    sio::append_json_string(out, entries[i].second);
  }
  out.push_back('}');
  return out;
}

}  // namespace siomq::surfaces::bus
