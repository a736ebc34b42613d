// The data plane's core requests (bus.md §4): pub, sub, unsub and request, read and validated in full
// before anything is looked up (§8.19). Pure: the fuzz target drives these directly.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "wire/result.h"

namespace siomq::surfaces::bus {

inline constexpr int64_t kDefaultRequestTimeoutMs = 5000;
inline constexpr int64_t kMaxRequestTimeoutMs = 60000;
// A queue group's name: a token (non-empty, no whitespace), at most this long.
inline constexpr size_t kMaxQueueBytes = 256;

struct PubRequest {
  std::string subject;
  std::string data;
  std::string header;  // canonical JSON text, empty: none
  std::string reply;   // empty: none
};
struct SubRequest {
  std::string subject;  // a pattern
  std::string queue;    // empty: none
};
struct UnsubRequest {
  std::string sid;
  std::optional<uint64_t> max;
};
struct RequestRequest {
  std::string subject;
  std::string data;
  std::string header;
  int64_t timeout_ms = kDefaultRequestTimeoutMs;
};

// `args` is the event's JSON array (name first); the attachments its placeholders name.
Result<PubRequest> parse_pub(std::string_view args, std::span<const std::string> attachments);
Result<SubRequest> parse_sub(std::string_view args);
Result<UnsubRequest> parse_unsub(std::string_view args);
Result<RequestRequest> parse_request(std::string_view args, std::span<const std::string> attachments);

// `name` must be a subject one may publish to: 400 otherwise (its message names `name`).
Status check_subject(std::string_view name, std::string_view subject);

}  // namespace siomq::surfaces::bus
