// What a command reads besides its flags: a message body from its argument or from stdin, and
// "Key:Value" headers.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "siomq/result.h"

namespace siomq::cli {

// The argument when given; else stdin's whole content when stdin is not a terminal; else "".
std::string body_from(const std::optional<std::string>& arg);

// A tyo-mq message (JSON text) from a body: the body itself when it is JSON (surrounding whitespace
// dropped), else the body as a JSON string; `as_string` forces the latter; an empty body is null.
std::string tyomq_message(std::string_view body, bool as_string);

// "Key:Value" (or "Key=Value") pairs; errc::bad_request names the first that is neither.
Result<std::vector<std::pair<std::string, std::string>>> parse_headers(const std::vector<std::string>& items);

}  // namespace siomq::cli
