// Pure helpers for HTTP requests: splitting a target into path and query, percent-decoding, and the
// checks a WebSocket upgrade request must pass. No sockets here, so the request path can be fuzzed.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace siomq::net {

struct Target {
  std::string_view path;
  std::vector<std::pair<std::string, std::string>> query;

  // The first value of a query parameter, if present.
  std::optional<std::string_view> param(std::string_view name) const;
};

// Splits "/socket.io/?EIO=4&transport=polling" into its path and decoded query parameters.
Target parse_target(std::string_view target);

// Decodes %XX escapes and, unless `plus_is_space` is false (a path segment), '+' as a space; nullopt on a
// malformed escape.
std::optional<std::string> percent_decode(std::string_view s, bool plus_is_space = true);

// True when a header value holds `token` in its comma-separated list, case-insensitively.
bool header_has_token(std::string_view value, std::string_view token);

// Why an upgrade request is not a valid WebSocket handshake, or nullopt when it is.
std::optional<std::string> websocket_upgrade_problem(std::string_view method, std::string_view upgrade,
                                                     std::string_view connection, std::string_view version,
                                                     std::string_view key);

}  // namespace siomq::net
