// Two byte strings joined so that either may hold any bytes: "<length of the first>:<first><second>" — the
// cluster's consumer-group interest terms and its consumer-name index members (Lua reads the same shape:
// cluster/name_claims.cc). Pure; any thread.
#pragma once

#include <charconv>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace siomq::wire {

inline std::string join_length_prefixed(std::string_view first, std::string_view second) {
  std::string out = std::to_string(first.size());
  out += ':';
  out += first;
  out += second;
  return out;
}

// (first, second) as views into `text`; nullopt when the length is not decimal digits up to the ':', or
// names more bytes than follow.
inline std::optional<std::pair<std::string_view, std::string_view>> split_length_prefixed(std::string_view text) {
  size_t colon = text.find(':');
  if (colon == std::string_view::npos) return std::nullopt;
  size_t n = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + colon, n);
  if (ec != std::errc() || end != text.data() + colon || n > text.size() - colon - 1) return std::nullopt;
  return std::pair{text.substr(colon + 1, n), text.substr(colon + 1 + n)};
}

}  // namespace siomq::wire
