#include "redis/redis_url.h"

#include <charconv>
#include <optional>

namespace siomq::redis {
namespace {

std::string percent_decode(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    unsigned v = 0;
    if (s[i] == '%' && i + 2 < s.size() &&
        std::from_chars(s.data() + i + 1, s.data() + i + 3, v, 16).ptr == s.data() + i + 3) {
      out.push_back(static_cast<char>(v));
      i += 2;
    } else {
      out.push_back(s[i]);
    }
  }
  return out;
}

std::optional<int> parse_number(std::string_view s, int max) {
  int v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size() || v < 0 || v > max) return std::nullopt;
  return v;
}

}  // namespace

std::string Url::where() const { return host + ":" + std::to_string(port); }

Result<Url> parse_url(std::string_view text) {
  auto bad = [&](const char* why) { return make_error("bad redis URL '" + std::string(text) + "': " + why, 400); };
  constexpr std::string_view kScheme = "redis://";
  std::string_view s = text;
  if (!s.starts_with(kScheme)) return bad("it must start with redis://");
  s.remove_prefix(kScheme.size());
  Url url;
  size_t slash = s.find('/');
  std::string_view authority = s.substr(0, slash);
  if (slash != std::string_view::npos) {
    std::string_view db = s.substr(slash + 1);
    if (!db.empty()) {
      auto n = parse_number(db, 1 << 20);
      if (!n) return bad("the database must be a number");
      url.db = *n;
    }
  }
  if (size_t at = authority.rfind('@'); at != std::string_view::npos) {
    std::string_view userinfo = authority.substr(0, at);
    authority.remove_prefix(at + 1);
    size_t colon = userinfo.find(':');
    if (colon == std::string_view::npos) {
      url.password = percent_decode(userinfo);
    } else {
      url.user = percent_decode(userinfo.substr(0, colon));
      url.password = percent_decode(userinfo.substr(colon + 1));
    }
  }
  std::string_view port;
  if (authority.starts_with('[')) {  // [IPv6]:port
    size_t close = authority.find(']');
    if (close == std::string_view::npos) return bad("unclosed '['");
    url.host = authority.substr(1, close - 1);
    std::string_view rest = authority.substr(close + 1);
    if (!rest.empty() && rest[0] != ':') return bad("unexpected text after the host");
    if (!rest.empty()) port = rest.substr(1);
  } else {
    size_t colon = authority.find(':');
    if (colon != 0) url.host = authority.substr(0, colon);
    if (colon != std::string_view::npos) port = authority.substr(colon + 1);
  }
  if (url.host.empty()) url.host = "127.0.0.1";
  if (!port.empty()) {
    auto n = parse_number(port, 65535);
    if (!n || *n == 0) return bad("the port must be a number from 1 to 65535");
    url.port = *n;
  }
  return url;
}

}  // namespace siomq::redis
