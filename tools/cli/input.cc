// Message bodies and headers from the command line (tools/cli/input.h).
#include "tools/cli/input.h"

#include <nlohmann/json.hpp>
#include <unistd.h>

#include <iostream>
#include <iterator>

#include "siomq/connection.h"

namespace siomq::cli {

std::string body_from(const std::optional<std::string>& arg) {
  if (arg) return *arg;
  if (::isatty(STDIN_FILENO)) return {};
  std::string text((std::istreambuf_iterator<char>(std::cin)), std::istreambuf_iterator<char>());
  return text;
}

std::string tyomq_message(std::string_view body, bool as_string) {
  if (as_string) return json_string(body);
  size_t first = body.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) return body.empty() ? "null" : json_string(body);
  size_t last = body.find_last_not_of(" \t\r\n");
  std::string_view trimmed = body.substr(first, last - first + 1);
  if (nlohmann::json::accept(trimmed)) return std::string(trimmed);
  return json_string(body.ends_with('\n') ? body.substr(0, body.size() - 1) : body);
}

Result<std::vector<std::pair<std::string, std::string>>> parse_headers(const std::vector<std::string>& items) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& item : items) {
    size_t at = item.find_first_of(":=");
    if (at == std::string::npos || at == 0) return Error{errc::bad_request, "a header is Key:Value, not '" + item + "'"};
    size_t value = item.find_first_not_of(' ', at + 1);
    out.emplace_back(item.substr(0, at), value == std::string::npos ? std::string() : item.substr(value));
  }
  return out;
}

}  // namespace siomq::cli
