// Durations and TTLs as tyo-mq writes them in JSON (§5.3, §5.5 with §0 row 7): a number of seconds, or
// a string "<n>[.<n>]" with an optional unit ms, s, m, h or d (default s, any case).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace siomq::durations {

// A raw JSON number as a finite double; nullopt for anything else.
std::optional<double> number(std::string_view raw);
// JavaScript's Number(value) of a raw JSON number or of a JSON string holding one (whitespace around
// it allowed); nullopt for anything else, and for values that are not finite.
std::optional<double> js_number(std::string_view raw);

// A duration in ms; nullopt when absent, zero, negative or invalid (the caller's default applies).
std::optional<int64_t> parse_duration_ms(std::string_view raw);

// A TTL value: absent (null or missing: the next source applies), never (a negative number, or a
// string that is not a duration), or a number of milliseconds.
struct Ttl {
  enum class Kind { absent, never, ms } kind = Kind::absent;
  int64_t ms = 0;
};
Ttl parse_ttl(std::string_view raw);

}  // namespace siomq::durations
