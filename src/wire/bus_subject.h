// Bus subjects (bus.md §2): tokens separated by '.', a token non-empty and free of whitespace, at most
// kMaxSubjectBytes UTF-8 bytes in all. A pattern may use "*" (exactly one token) and ">" (one or more
// trailing tokens, last token only); a subject that is published to may not. Only a whole token "*" or
// ">" is a wildcard ("a*" is literal), as in NATS. Pure, linear in the subject, no allocation.
#pragma once

#include <cstddef>
#include <string_view>

namespace siomq::bus {

inline constexpr size_t kMaxSubjectBytes = 1024;
// Subjects of the server (advisories, stats): clients may subscribe to them, never publish (§8.2).
inline constexpr std::string_view kSystemPrefix = "$SYS.";
// Reply subjects the server makes for `request` (§4).
inline constexpr std::string_view kInboxPrefix = "_INBOX.";

// Why a subject or pattern is refused, as a 400's message ends ("subject: <why>"); nullptr when valid.
const char* subject_error(std::string_view subject);  // for publishing: no wildcard
const char* pattern_error(std::string_view pattern);  // for subscribing: wildcards allowed

inline bool is_system(std::string_view subject) { return subject.substr(0, kSystemPrefix.size()) == kSystemPrefix; }

// Whether `subject` (valid, no wildcard) matches `pattern` (valid).
bool subject_matches(std::string_view pattern, std::string_view subject);
// Whether some subject matches both patterns (two streams may not bind overlapping subjects, §8.5).
bool patterns_overlap(std::string_view a, std::string_view b);
// Whether every subject `inner` matches is matched by `outer` as well.
bool pattern_covers(std::string_view outer, std::string_view inner);

}  // namespace siomq::bus
