#include "net/http_request.h"

#include <cctype>

#include "wire/base64.h"

namespace siomq::net {
namespace {

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i]))) return false;
  }
  return true;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

}  // namespace

std::optional<std::string_view> Target::param(std::string_view name) const {
  for (const auto& [k, v] : query) {
    if (k == name) return std::string_view(v);
  }
  return std::nullopt;
}

std::optional<std::string> percent_decode(std::string_view s, bool plus_is_space) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (c == '+' && plus_is_space) {
      out.push_back(' ');
    } else if (c == '%') {
      if (i + 2 >= s.size()) return std::nullopt;
      int hi = hex_value(s[i + 1]);
      int lo = hex_value(s[i + 2]);
      if (hi < 0 || lo < 0) return std::nullopt;
      out.push_back(static_cast<char>(hi * 16 + lo));
      i += 2;
    } else {
      out.push_back(c);
    }
  }
  return out;
}

Target parse_target(std::string_view target) {
  Target t;
  size_t q = target.find('?');
  t.path = target.substr(0, q);
  if (q == std::string_view::npos) return t;
  std::string_view rest = target.substr(q + 1);
  size_t hash = rest.find('#');
  if (hash != std::string_view::npos) rest = rest.substr(0, hash);
  while (!rest.empty()) {
    size_t amp = rest.find('&');
    std::string_view part = rest.substr(0, amp);
    rest = amp == std::string_view::npos ? std::string_view() : rest.substr(amp + 1);
    if (part.empty()) continue;
    size_t eq = part.find('=');
    auto key = percent_decode(part.substr(0, eq));
    auto value = eq == std::string_view::npos ? std::optional<std::string>("") : percent_decode(part.substr(eq + 1));
    // A malformed escape makes the parameter unusable; it is dropped like an absent one.
    if (key && value) t.query.emplace_back(std::move(*key), std::move(*value));
  }
  return t;
}

bool header_has_token(std::string_view value, std::string_view token) {
  while (!value.empty()) {
    size_t comma = value.find(',');
    if (iequals(trim(value.substr(0, comma)), token)) return true;
    if (comma == std::string_view::npos) break;
    value.remove_prefix(comma + 1);
  }
  return false;
}

std::optional<std::string> websocket_upgrade_problem(std::string_view method, std::string_view upgrade,
                                                     std::string_view connection, std::string_view version,
                                                     std::string_view key) {
  if (method != "GET") return "WebSocket handshake must be a GET";
  if (!header_has_token(upgrade, "websocket")) return "missing Upgrade: websocket";
  if (!header_has_token(connection, "upgrade")) return "missing Connection: Upgrade";
  if (trim(version) != "13") return "unsupported Sec-WebSocket-Version";
  auto decoded = base64::decode(trim(key));
  if (!decoded || decoded->size() != 16) return "invalid Sec-WebSocket-Key";
  return std::nullopt;
}

}  // namespace siomq::net
