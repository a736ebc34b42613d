// Durations on the command line: "500ms", "5s", "2m", "1h", or a bare number of seconds ("1.5").
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

namespace siomq::cli {

// nullopt when `text` is not a duration (negative, empty, an unknown unit, trailing characters).
std::optional<std::chrono::milliseconds> parse_duration(std::string_view text);

// "1.5s", "250ms", "2m" — the shortest of these that says it exactly.
std::string format_duration(std::chrono::milliseconds d);

}  // namespace siomq::cli
