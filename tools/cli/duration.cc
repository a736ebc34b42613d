// Durations on the command line (tools/cli/duration.h): one pass over the text, no std::regex.
#include "tools/cli/duration.h"

#include <charconv>
#include <cmath>

namespace siomq::cli {

std::optional<std::chrono::milliseconds> parse_duration(std::string_view text) {
  size_t digits = 0;
  while (digits < text.size() && ((text[digits] >= '0' && text[digits] <= '9') || text[digits] == '.')) ++digits;
  if (digits == 0) return std::nullopt;
  double value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + digits, value);
  if (ec != std::errc() || end != text.data() + digits || !std::isfinite(value)) return std::nullopt;
  std::string_view unit = text.substr(digits);
  double ms_per_unit = 0;
  if (unit.empty() || unit == "s") ms_per_unit = 1000;
  else if (unit == "ms") ms_per_unit = 1;
  else if (unit == "m") ms_per_unit = 60000;
  else if (unit == "h") ms_per_unit = 3600000;
  else return std::nullopt;
  double ms = value * ms_per_unit;
  if (ms > 1e15) return std::nullopt;
  return std::chrono::milliseconds(static_cast<int64_t>(std::llround(ms)));
}

std::string format_duration(std::chrono::milliseconds d) {
  int64_t ms = d.count();
  if (ms % 3600000 == 0 && ms >= 3600000) return std::to_string(ms / 3600000) + "h";
  if (ms % 60000 == 0 && ms >= 60000) return std::to_string(ms / 60000) + "m";
  if (ms % 1000 == 0) return std::to_string(ms / 1000) + "s";
  return std::to_string(ms) + "ms";
}

}  // namespace siomq::cli
