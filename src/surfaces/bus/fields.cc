#include "surfaces/bus/fields.h"

#include <charconv>
#include <unordered_map>

#include "wire/json_spans.h"
#include "wire/socketio.h"

namespace siomq::surfaces::bus {
namespace {

Error bad(std::string_view name, std::string_view why) {
  return Error{kBadRequest, std::string(name) + ": " + std::string(why)};
}

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

Result<std::string_view> request_object(std::string_view args) {
  auto elements = json_spans::array_elements(args);
  if (!elements || elements->size() < 2) return Error{kBadRequest, "request: a payload object is required"};
  std::string_view payload = (*elements)[1];
  if (payload.empty() || payload.front() != '{') return Error{kBadRequest, "request: the payload must be an object"};
  return payload;
}

std::optional<int64_t> parse_integer(std::string_view raw) {
  if (raw.empty()) return std::nullopt;
  int64_t v = 0;
  auto [end, ec] = std::from_chars(raw.data(), raw.data() + raw.size(), v);
  if (ec != std::errc() || end != raw.data() + raw.size()) return std::nullopt;
  if (raw.front() == '-' ? raw.size() > 2 && raw[1] == '0' : raw.size() > 1 && raw[0] == '0') return std::nullopt;
  return v;
}

Fields::Fields(std::string_view object, std::initializer_list<std::string_view> names) {
  auto members = json_spans::object_members(object);
  if (!members) {
    error_ = Error{kBadRequest, "request: the payload must be an object"};
    return;
  }
  for (const auto& m : *members) {
    for (std::string_view n : names) {
      if (m.key != n) continue;
      bool replaced = false;
      for (auto& f : found_) {
        if (f.first == n) {
          f.second = m.value;
          replaced = true;
        }
      }
      if (!replaced) found_.emplace_back(n, m.value);
      break;
    }
  }
}

void Fields::fail(std::string_view name, std::string_view why) {
  if (!error_) error_ = bad(name, why);
}

std::optional<std::string_view> Fields::raw(std::string_view name) const {
  for (const auto& f : found_) {
    if (f.first == name) return f.second == "null" ? std::nullopt : std::optional<std::string_view>(f.second);
  }
  return std::nullopt;
}

std::optional<std::string> Fields::string(std::string_view name, bool required, size_t max_bytes) {
  if (error_) return std::nullopt;
  auto r = raw(name);
  if (!r) {
    if (required) fail(name, "is required");
    return std::nullopt;
  }
  if (r->front() != '"') {
    fail(name, "must be a string");
    return std::nullopt;
  }
  auto s = json_spans::unescape(*r);
  if (!s) {
    fail(name, "must be a string");
    return std::nullopt;
  }
  if (s->size() > max_bytes) {
    fail(name, "is longer than " + std::to_string(max_bytes) + " bytes");
    return std::nullopt;
  }
  return std::move(*s);
}

std::optional<int64_t> Fields::integer(std::string_view name, int64_t min, int64_t max) {
  if (error_) return std::nullopt;
  auto r = raw(name);
  if (!r) return std::nullopt;
  auto v = parse_integer(*r);
  if (!v) {
    fail(name, "must be an integer");
    return std::nullopt;
  }
  if (*v < min || *v > max) {
    fail(name, "must be between " + std::to_string(min) + " and " + std::to_string(max));
    return std::nullopt;
  }
  return v;
}

std::optional<bool> Fields::boolean(std::string_view name) {
  if (error_) return std::nullopt;
  auto r = raw(name);
  if (!r) return std::nullopt;
  if (*r == "true") return true;
  if (*r == "false") return false;
  fail(name, "must be a boolean");
  return std::nullopt;
}

std::optional<std::vector<std::string>> Fields::strings(std::string_view name, size_t max_items, size_t max_bytes) {
  if (error_) return std::nullopt;
  auto r = raw(name);
  if (!r) return std::nullopt;
  auto items = r->front() == '[' ? json_spans::array_elements(*r) : Result<std::vector<std::string_view>>(Error{});
  if (!items) {
    fail(name, "must be an array of strings");
    return std::nullopt;
  }
  if (items->size() > max_items) {
    fail(name, "has more than " + std::to_string(max_items) + " entries");
    return std::nullopt;
  }
  std::vector<std::string> out;
  out.reserve(items->size());
  for (std::string_view item : *items) {
    auto s = item.empty() || item.front() != '"' ? Result<std::string>(Error{}) : json_spans::unescape(item);
    if (!s) {
      fail(name, "must be an array of strings");
      return std::nullopt;
    }
    if (s->size() > max_bytes) {
      fail(name, "has an entry longer than " + std::to_string(max_bytes) + " bytes");
      return std::nullopt;
    }
    out.push_back(std::move(*s));
  }
  return out;
}

std::optional<std::vector<int64_t>> Fields::integers(std::string_view name, size_t max_items, int64_t min, int64_t max) {
  if (error_) return std::nullopt;
  auto r = raw(name);
  if (!r) return std::nullopt;
  auto items = r->front() == '[' ? json_spans::array_elements(*r) : Result<std::vector<std::string_view>>(Error{});
  if (!items) {
    fail(name, "must be an array of integers");
    return std::nullopt;
  }
  if (items->size() > max_items) {
    fail(name, "has more than " + std::to_string(max_items) + " entries");
    return std::nullopt;
  }
  std::vector<int64_t> out;
  for (std::string_view item : *items) {
    auto v = parse_integer(item);
    if (!v || *v < min || *v > max) {
      fail(name, "must hold integers between " + std::to_string(min) + " and " + std::to_string(max));
      return std::nullopt;
    }
    out.push_back(*v);
  }
  return out;
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
