#include "wire/json_spans.h"

#include <cstring>

namespace siomq::json_spans {
namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

size_t skip_space(std::string_view s, size_t i) {
  while (i < s.size() && is_space(s[i])) ++i;
  return i;
}

// One past the closing quote of the string starting at s[i] (a quote), or npos.
size_t string_end(std::string_view s, size_t i) {
  // memchr to each quote (vectorised), then: escaped when an odd number of backslashes precede it.
  const char* base = s.data();
  for (++i; i < s.size();) {
    const void* q = std::memchr(base + i, '"', s.size() - i);
    if (!q) return std::string_view::npos;
    size_t at = static_cast<size_t>(static_cast<const char*>(q) - base);
    size_t slashes = 0;
    while (at - slashes > i && base[at - slashes - 1] == '\\') ++slashes;
    if (slashes % 2 == 0) return at + 1;
    i = at + 1;
  }
  return std::string_view::npos;
}

void append_utf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xc0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3f)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xe0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3f)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3f)));
  } else {
    out.push_back(static_cast<char>(0xf0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3f)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3f)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3f)));
  }
}

int hex4(std::string_view s, size_t i) {
  if (i + 4 > s.size()) return -1;
  int v = 0;
  for (size_t k = i; k < i + 4; ++k) {
    char c = s[k];
    int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
    if (d < 0) return -1;
    v = v * 16 + d;
  }
  return v;
}

}  // namespace

Result<size_t> value_end(std::string_view s, size_t pos) {
  size_t i = skip_space(s, pos);
  if (i >= s.size()) return make_error("missing value");
  // Containers are skipped by counting brackets outside strings; the text was validated already.
  int depth = 0;
  do {
    if (i >= s.size()) return make_error("unterminated value");
    char c = s[i];
    if (c == '"') {
      i = string_end(s, i);
      if (i == std::string_view::npos) return make_error("unterminated string");
    } else if (c == '{' || c == '[') {
      ++depth;
      ++i;
    } else if (c == '}' || c == ']') {
      if (--depth < 0) return make_error("unbalanced brackets");
      ++i;
    } else if (depth == 0) {
      // A scalar: up to the next delimiter.
      size_t start = i;
      while (i < s.size() && !is_space(s[i]) && s[i] != ',' && s[i] != '}' && s[i] != ']' && s[i] != ':') ++i;
      if (i == start) return make_error("unexpected character");
    } else {
      ++i;
    }
  } while (depth > 0);
  return i;
}

Result<std::vector<Member>> object_members(std::string_view s) {
  std::vector<Member> out;
  out.reserve(8);  // one allocation for the usual request object
  size_t i = skip_space(s, 0);
  if (i >= s.size() || s[i] != '{') return make_error("not an object");
  i = skip_space(s, i + 1);
  if (i < s.size() && s[i] == '}') return out;
  while (true) {
    if (i >= s.size() || s[i] != '"') return make_error("expected a key");
    size_t key_end = string_end(s, i);
    if (key_end == std::string_view::npos) return make_error("unterminated key");
    auto key = unescape(s.substr(i, key_end - i));
    if (!key) return key.error();
    i = skip_space(s, key_end);
    if (i >= s.size() || s[i] != ':') return make_error("expected ':'");
    size_t start = skip_space(s, i + 1);
    auto end = value_end(s, start);
    if (!end) return end.error();
    out.push_back({std::move(*key), s.substr(start, *end - start)});
    i = skip_space(s, *end);
    if (i < s.size() && s[i] == ',') {
      i = skip_space(s, i + 1);
      continue;
    }
    if (i < s.size() && s[i] == '}') return out;
    return make_error("expected ',' or '}'");
  }
}

Result<std::vector<std::string_view>> array_elements(std::string_view s) {
  std::vector<std::string_view> out;
  out.reserve(4);
  size_t i = skip_space(s, 0);
  if (i >= s.size() || s[i] != '[') return make_error("not an array");
  i = skip_space(s, i + 1);
  if (i < s.size() && s[i] == ']') return out;
  while (true) {
    auto end = value_end(s, i);
    if (!end) return end.error();
    out.push_back(s.substr(i, *end - i));
    i = skip_space(s, *end);
    if (i < s.size() && s[i] == ',') {
      i = skip_space(s, i + 1);
      continue;
    }
    if (i < s.size() && s[i] == ']') return out;
    return make_error("expected ',' or ']'");
  }
}

Result<std::string> unescape(std::string_view lit) {
  if (lit.size() < 2 || lit.front() != '"' || lit.back() != '"') return make_error("not a string");
  std::string out;
  out.reserve(lit.size() - 2);
  for (size_t i = 1; i + 1 < lit.size(); ++i) {
    if (lit[i] != '\\') {
      // The run up to the next backslash (or the closing quote) is copied whole.
      const void* slash = std::memchr(lit.data() + i, '\\', lit.size() - 1 - i);
      size_t end = slash ? static_cast<size_t>(static_cast<const char*>(slash) - lit.data()) : lit.size() - 1;
      out.append(lit.data() + i, end - i);
      i = end - 1;
      continue;
    }
    if (++i >= lit.size() - 1) return make_error("bad escape");
    switch (lit[i]) {
      case '"': out.push_back('"'); break;
      case '\\': out.push_back('\\'); break;
      case '/': out.push_back('/'); break;
      case 'b': out.push_back('\b'); break;
      case 'f': out.push_back('\f'); break;
      case 'n': out.push_back('\n'); break;
      case 'r': out.push_back('\r'); break;
      case 't': out.push_back('\t'); break;
      case 'u': {
        int hi = hex4(lit.substr(0, lit.size() - 1), i + 1);
        if (hi < 0) return make_error("bad \\u escape");
        i += 4;
        uint32_t cp = static_cast<uint32_t>(hi);
        // A surrogate pair becomes one code point; a lone surrogate is kept as JavaScript keeps it (WTF-8).
        if (hi >= 0xd800 && hi <= 0xdbff && i + 6 < lit.size() && lit[i + 1] == '\\' && lit[i + 2] == 'u') {
          int lo = hex4(lit.substr(0, lit.size() - 1), i + 3);
          if (lo >= 0xdc00 && lo <= 0xdfff) {
            cp = 0x10000 + ((static_cast<uint32_t>(hi) - 0xd800) << 10) + (static_cast<uint32_t>(lo) - 0xdc00);
            i += 6;
          }
        }
        append_utf8(out, cp);
        break;
      }
      default:
        return make_error("bad escape");
    }
  }
  return out;
}

bool truthy(std::string_view v) {
  return !(v.empty() || v == "false" || v == "null" || v == "\"\"" || v == "0" || v == "-0" ||
           v.find_first_not_of("-0.eE+") == std::string_view::npos);
}

}  // namespace siomq::json_spans
