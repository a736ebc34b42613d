#include "wire/json_fields.h"

#include <charconv>

#include "wire/json_spans.h"

namespace siomq::json {

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
  if (!error_) error_ = Error{kBadRequest, std::string(name) + ": " + std::string(why)};
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

std::optional<std::string> Fields::choice(std::string_view name, std::initializer_list<std::string_view> choices) {
  auto s = string(name, false, 64);
  if (!s) return std::nullopt;
  for (std::string_view c : choices) {
    if (*s == c) return s;
  }
  std::string list;
  for (std::string_view c : choices) list += (list.empty() ? "" : ", ") + std::string(c);
  fail(name, "must be one of " + list);
  return std::nullopt;
}

}  // namespace siomq::json
