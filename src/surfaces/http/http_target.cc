#include "surfaces/http/http_target.h"

#include <cstdint>
#include <utility>

#include "net/http_request.h"

namespace siomq::surfaces::http {
namespace {

// Strict UTF-8 (no overlongs, no surrogates) without control characters.
bool clean_text(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      if (c < 0x20 || c == 0x7f) return false;
      ++i;
      continue;
    }
    size_t n = c >= 0xf0 ? 3 : c >= 0xe0 ? 2 : c >= 0xc2 ? 1 : 0;
    if (n == 0 || c > 0xf4 || i + n >= s.size()) return false;
    uint32_t cp = c & (0x3f >> n);
    for (size_t k = 1; k <= n; ++k) {
      auto d = static_cast<unsigned char>(s[i + k]);
      if ((d & 0xc0) != 0x80) return false;
      cp = (cp << 6) | (d & 0x3f);
    }
    if ((n == 2 && cp < 0x800) || (n == 3 && (cp < 0x10000 || cp > 0x10ffff)) || (cp >= 0xd800 && cp <= 0xdfff))
      return false;
    i += n + 1;
  }
  return true;
}

// %XX decoding (and '+' as a space in the query), then the clean-text rule.
Result<std::string> decode(std::string_view s, bool plus_is_space) {
  auto out = net::percent_decode(s, plus_is_space);
  if (!out) return make_error("bad %-escape in the request target", 400);
  if (!clean_text(*out)) return make_error("the request target is not clean UTF-8", 400);
  return std::move(*out);
}

}  // namespace

const std::string* HttpTarget::param(std::string_view name) const {
  for (const auto& [k, v] : query) {
    if (k == name) return &v;
  }
  return nullptr;
}

Result<HttpTarget> parse_target(std::string_view target) {
  if (target.size() > kMaxTargetBytes) return make_error("request target too long", 414);
  if (target.empty() || target[0] != '/') return make_error("bad request target", 400);
  HttpTarget out;
  size_t q = target.find('?');
  std::string_view path = target.substr(0, q);
  std::string_view query = q == std::string_view::npos ? std::string_view{} : target.substr(q + 1);
  if (size_t hash = query.find('#'); hash != std::string_view::npos) query = query.substr(0, hash);
  size_t start = 1;
  while (start <= path.size()) {
    size_t end = path.find('/', start);
    if (end == std::string_view::npos) end = path.size();
    if (end > start) {
      if (out.segments.size() == kMaxSegments) return make_error("too many path segments", 400);
      auto seg = decode(path.substr(start, end - start), false);
      if (!seg) return seg.error();
      out.segments.push_back(std::move(*seg));
    }
    start = end + 1;
  }
  start = 0;
  while (start < query.size()) {
    size_t end = query.find('&', start);
    if (end == std::string_view::npos) end = query.size();
    std::string_view pair = query.substr(start, end - start);
    start = end + 1;
    if (pair.empty()) continue;
    if (out.query.size() == kMaxQueryParams) return make_error("too many query parameters", 400);
    size_t eq = pair.find('=');
    auto key = decode(pair.substr(0, eq), true);
    if (!key) return key.error();
    auto value = decode(eq == std::string_view::npos ? std::string_view{} : pair.substr(eq + 1), true);
    if (!value) return value.error();
    out.query.emplace_back(std::move(*key), std::move(*value));
  }
  return out;
}

bool reserved_name(std::string_view name) {
  return name == "__proto__" || name == "constructor" || name == "prototype";
}

}  // namespace siomq::surfaces::http
