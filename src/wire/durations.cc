#include "wire/durations.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <string>

#include "wire/json_spans.h"

namespace siomq::durations {

std::optional<double> number(std::string_view v) {
  if (v.empty()) return std::nullopt;
  double d = 0;
  auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), d);
  if (ec != std::errc() || end != v.data() + v.size() || !std::isfinite(d)) return std::nullopt;
  return d;
}

std::optional<double> js_number(std::string_view raw) {
  if (raw.empty() || raw.front() != '"') return number(raw);
  auto text = json_spans::unescape(raw);
  if (!text) return std::nullopt;
  size_t b = text->find_first_not_of(" \t\r\n"), e = text->find_last_not_of(" \t\r\n");
  if (b == std::string::npos) return std::nullopt;
  return number(std::string_view(*text).substr(b, e - b + 1));
}

namespace {

// Milliseconds of `value` units, saturating far beyond any timer's reach (about 290 million years).
int64_t to_ms(double value, double unit_ms) {
  double ms = std::round(value * unit_ms);
  constexpr double kMax = 9.0e15;
  return static_cast<int64_t>(std::clamp(ms, -kMax, kMax));
}

// "<digits>[.<digits>][ms|s|m|h|d]" (any case) in ms; nullopt if the text does not match.
std::optional<int64_t> duration_text_ms(std::string_view text) {
  size_t i = 0;
  while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) ++i;
  if (i == 0) return std::nullopt;
  if (i < text.size() && text[i] == '.') {
    size_t j = ++i;
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) ++i;
    if (i == j) return std::nullopt;
  }
  std::string unit;
  for (char c : text.substr(i)) unit.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  double scale = 0;
  if (unit.empty() || unit == "s") scale = 1000;
  else if (unit == "ms") scale = 1;
  else if (unit == "m") scale = 60'000;
  else if (unit == "h") scale = 3'600'000;
  else if (unit == "d") scale = 86'400'000;
  else return std::nullopt;
  auto value = number(text.substr(0, i));
  if (!value) return std::nullopt;
  return to_ms(*value, scale);
}

}  // namespace

std::optional<int64_t> parse_duration_ms(std::string_view raw) {
  std::optional<int64_t> ms;
  if (raw.empty()) return std::nullopt;
  if (raw.front() == '"') {
    auto text = json_spans::unescape(raw);
    if (text) ms = duration_text_ms(*text);
  } else if (auto n = number(raw)) {
    ms = to_ms(*n, 1000);
  }
  if (!ms || *ms <= 0) return std::nullopt;
  return ms;
}

Ttl parse_ttl(std::string_view raw) {
  if (raw.empty() || raw == "null") return {};
  if (raw.front() == '"') {
    auto text = json_spans::unescape(raw);
    auto ms = text ? duration_text_ms(*text) : std::nullopt;
    if (!ms) return {Ttl::Kind::never, 0};
    return {Ttl::Kind::ms, *ms};
  }
  auto n = number(raw);
  if (!n) return {};  // booleans, objects: not a TTL at all
  if (*n < 0) return {Ttl::Kind::never, 0};
  return {Ttl::Kind::ms, to_ms(*n, 1000)};
}

}  // namespace siomq::durations
