#include "wire/js_json.h"

#include <simdjson.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <ctime>
#include <unordered_map>
#include <utility>
#include <vector>

#include "wire/socketio.h"

namespace siomq::js {

std::string number(double v) {
  if (std::isnan(v) || std::isinf(v)) return "null";
  if (v == 0) return "0";
  std::string out;
  if (v < 0) {
    out.push_back('-');
    v = -v;
  }
  // Shortest round-trip digits, then ECMAScript's layout rules (ECMA-262 Number::toString).
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific);
  std::string_view sci(buf, static_cast<size_t>(res.ptr - buf));
  size_t e_pos = sci.find('e');
  std::string digits;
  for (char c : sci.substr(0, e_pos)) {
    if (c != '.') digits.push_back(c);
  }
  int exp10 = std::atoi(std::string(sci.substr(e_pos + 1)).c_str());
  int k = static_cast<int>(digits.size());
  int n = exp10 + 1;
  if (k <= n && n <= 21) {
    out += digits;
    out.append(static_cast<size_t>(n - k), '0');
  } else if (0 < n && n <= 21) {
    out += digits.substr(0, static_cast<size_t>(n));
    out.push_back('.');
    out += digits.substr(static_cast<size_t>(n));
  } else if (-6 < n && n <= 0) {
    out += "0.";
    out.append(static_cast<size_t>(-n), '0');
    out += digits;
  } else {
    out.push_back(digits[0]);
    if (k > 1) {
      out.push_back('.');
      out += digits.substr(1);
    }
    out.push_back('e');
    out.push_back(n - 1 >= 0 ? '+' : '-');
    out += std::to_string(std::abs(n - 1));
  }
  return out;
}

bool is_array_index(std::string_view key) {
  if (key.empty() || key.size() > 10) return false;
  if (key.size() > 1 && key[0] == '0') return false;
  uint64_t v = 0;
  for (char c : key) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + static_cast<uint64_t>(c - '0');
  }
  return v < 4294967295ULL;
}

std::string iso_date(int64_t unix_ms) {
  std::time_t secs = static_cast<std::time_t>(unix_ms / 1000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[96];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
                tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<int>(unix_ms % 1000));
  return buf;
}

std::optional<int64_t> parse_iso_date(std::string_view text) {
  // Exactly the shape iso_date writes: "YYYY-MM-DDTHH:MM:SS.mmmZ", 24 characters.
  if (text.size() != 24) return std::nullopt;
  auto digits = [&](size_t at, size_t n) -> std::optional<int> {
    int v = 0;
    for (size_t i = at; i < at + n; ++i) {
      if (text[i] < '0' || text[i] > '9') return std::nullopt;
      v = v * 10 + (text[i] - '0');
    }
    return v;
  };
  static constexpr std::pair<size_t, char> kMarks[] = {{4, '-'}, {7, '-'}, {10, 'T'}, {13, ':'}, {16, ':'}, {19, '.'}, {23, 'Z'}};
  for (const auto& mark : kMarks) {
    if (text[mark.first] != mark.second) return std::nullopt;
  }
  auto y = digits(0, 4), mo = digits(5, 2), d = digits(8, 2), h = digits(11, 2), mi = digits(14, 2), s = digits(17, 2),
       ms = digits(20, 3);
  if (!y || !mo || !d || !h || !mi || !s || !ms || *mo < 1 || *mo > 12 || *d < 1 || *d > 31 || *h > 23 || *mi > 59 || *s > 59)
    return std::nullopt;
  // Days from the civil date (proleptic Gregorian; H. Hinnant's algorithm).
  int yy = *y - (*mo <= 2);
  int era = yy / 400;
  int yoe = yy - era * 400;
  int doy = (153 * (*mo + (*mo > 2 ? -3 : 9)) + 2) / 5 + *d - 1;
  int64_t days = int64_t{era} * 146097 + yoe * 365 + yoe / 4 - yoe / 100 + doy - 719468;
  return ((days * 24 + *h) * 60 + *mi) * 60'000 + int64_t{*s} * 1000 + *ms;
}

std::string base36(uint64_t v) {
  std::string out;
  append_base36(out, v);
  return out;
}

void append_base36(std::string& out, uint64_t v) {
  static constexpr char kDigits[] = "0123456789abcdefghijklmnopqrstuvwxyz";
  char digits[13];  // 36^13 > 2^64
  char* p = std::end(digits);
  do *--p = kDigits[v % 36]; while (v /= 36);
  out.append(p, std::end(digits));
}

bool utf16_less(std::string_view a, std::string_view b) {
  // UTF-8 byte order is code-point order, which agrees with UTF-16 order except that the surrogates
  // of U+10000 and above (0xD800-0xDFFF) sort before U+E000-U+FFFF. Compare code points, mapping the
  // supplementary planes just below U+E000.
  auto next = [](std::string_view s, size_t& i) -> uint32_t {
    auto c = static_cast<unsigned char>(s[i]);
    int extra = c >= 0xf0 ? 3 : c >= 0xe0 ? 2 : c >= 0xc0 ? 1 : 0;
    uint32_t cp = extra == 0 ? c : c & (0x3f >> extra);
    ++i;
    for (int k = 0; k < extra && i < s.size(); ++k, ++i) cp = (cp << 6) | (static_cast<unsigned char>(s[i]) & 0x3f);
    return cp;
  };
  auto unit = [](uint32_t cp) -> uint32_t {
    if (cp >= 0x10000) return 0xd800 + ((cp - 0x10000) >> 10);  // its high surrogate decides first
    return cp;
  };
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    uint32_t x = next(a, i), y = next(b, j);
    if (x == y) continue;
    uint32_t ux = unit(x), uy = unit(y);
    if (ux != uy) return ux < uy;
    // Same high surrogate: the low surrogates order as the code points do.
    return x < y;
  }
  return i >= a.size() && j < b.size();
}

void append_value(std::string& out, const simdjson::dom::element& value, KeyOrder order) {
  using simdjson::dom::element_type;
  switch (value.type()) {
    case element_type::OBJECT: {
      // JSON.parse keeps the last value of a duplicated key at the key's first position. Small objects
      // look a key up by scanning; larger ones through a hash index, so that a body of many keys costs
      // linear time, not quadratic.
      std::vector<std::pair<std::string_view, simdjson::dom::element>> fields;
      std::unordered_map<std::string_view, size_t> index;
      simdjson::dom::object obj = value.get_object().value_unsafe();
      constexpr size_t kScanned = 16;
      for (auto field : obj) {
        if (fields.size() < kScanned) {
          auto it = std::find_if(fields.begin(), fields.end(), [&](const auto& f) { return f.first == field.key; });
          if (it != fields.end()) {
            it->second = field.value;
            continue;
          }
        } else {
          if (index.empty())
            for (size_t i = 0; i < fields.size(); ++i) index.emplace(fields[i].first, i);
          auto [it, added] = index.emplace(field.key, fields.size());
          if (!added) {
            fields[it->second].second = field.value;
            continue;
          }
        }
        fields.emplace_back(field.key, field.value);
      }
      if (order == KeyOrder::sorted) {
        std::sort(fields.begin(), fields.end(), [](const auto& a, const auto& b) { return utf16_less(a.first, b.first); });
      } else {
        std::stable_partition(fields.begin(), fields.end(), [](const auto& f) { return is_array_index(f.first); });
        auto index_end =
            std::find_if(fields.begin(), fields.end(), [](const auto& f) { return !is_array_index(f.first); });
        std::sort(fields.begin(), index_end, [](const auto& a, const auto& b) {
          return a.first.size() != b.first.size() ? a.first.size() < b.first.size() : a.first < b.first;
        });
      }
      out.push_back('{');
      bool first = true;
      for (const auto& [k, v] : fields) {
        if (!first) out.push_back(',');
        first = false;
        sio::append_json_string(out, k);
        out.push_back(':');
        append_value(out, v, order);
      }
      out.push_back('}');
      return;
    }
    case element_type::ARRAY: {
      out.push_back('[');
      bool first = true;
      simdjson::dom::array arr = value.get_array().value_unsafe();
      for (auto el : arr) {
        if (!first) out.push_back(',');
        first = false;
        append_value(out, el, order);
      }
      out.push_back(']');
      return;
    }
    case element_type::STRING:
      sio::append_json_string(out, value.get_string().value_unsafe());
      return;
    case element_type::INT64: {
      int64_t i = value.get_int64().value_unsafe();
      if (i > -(int64_t{1} << 53) && i < (int64_t{1} << 53)) out += std::to_string(i);
      else out += number(static_cast<double>(i));
      return;
    }
    case element_type::UINT64: {
      uint64_t u = value.get_uint64().value_unsafe();
      if (u < (uint64_t{1} << 53)) out += std::to_string(u);
      else out += number(static_cast<double>(u));
      return;
    }
    case element_type::DOUBLE:
      out += number(value.get_double().value_unsafe());
      return;
    case element_type::BOOL:
      out += value.get_bool().value_unsafe() ? "true" : "false";
      return;
    case element_type::NULL_VALUE:
      out += "null";
      return;
  }
}

namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// JSON's number grammar: -?(0|[1-9]d*)(.d+)?([eE][+-]?d+)?
bool valid_number(std::string_view t) {
  size_t i = 0;
  if (i < t.size() && t[i] == '-') ++i;
  if (i >= t.size() || !is_digit(t[i])) return false;
  if (t[i] == '0') ++i;
  else while (i < t.size() && is_digit(t[i])) ++i;
  if (i < t.size() && t[i] == '.') {
    ++i;
    if (i >= t.size() || !is_digit(t[i])) return false;
    while (i < t.size() && is_digit(t[i])) ++i;
  }
  if (i < t.size() && (t[i] == 'e' || t[i] == 'E')) {
    ++i;
    if (i < t.size() && (t[i] == '+' || t[i] == '-')) ++i;
    if (i >= t.size() || !is_digit(t[i])) return false;
    while (i < t.size() && is_digit(t[i])) ++i;
  }
  return i == t.size();
}

// Whether simdjson may refuse the token: an integer of more than 18 digits, a long decimal, or an exponent
// that with the mantissa's digits passes 300 ("1000000000e300" overflows with an exponent of 300; a number
// below 10^300 cannot). Rewriting one that did fit is harmless: it happens only once simdjson has refused a
// number of the text, and "%.17e" gives back the same double.
bool beyond_64_bits(std::string_view t) {
  size_t e = t.find_first_of("eE");
  if (e != std::string_view::npos) {
    std::string_view exp = t.substr(e + 1);
    if (!exp.empty() && (exp[0] == '+' || exp[0] == '-')) exp.remove_prefix(1);
    if (exp.size() > 3 || t.size() > 40) return true;
    size_t digits = 0;
    for (char c : t.substr(0, e)) digits += is_digit(c) ? 1 : 0;
    return static_cast<size_t>(std::atoi(std::string(exp).c_str())) + digits > 300;
  }
  if (t.find('.') != std::string_view::npos) return t.size() > 40;
  size_t digits = t.size() - (t[0] == '-' ? 1 : 0);
  return digits > 18;
}

}  // namespace

std::optional<std::string> tame_numbers(std::string_view json) {
  std::string out;
  out.reserve(json.size());
  bool changed = false;
  size_t i = 0;
  while (i < json.size()) {
    char c = json[i];
    if (c == '"') {
      size_t j = i + 1;
      while (j < json.size() && json[j] != '"') j += json[j] == '\\' ? 2 : 1;
      if (j >= json.size()) return std::nullopt;
      out.append(json.substr(i, j + 1 - i));
      i = j + 1;
      continue;
    }
    if (c == '-' || is_digit(c)) {
      size_t j = i;
      while (j < json.size() && (is_digit(json[j]) || json[j] == '-' || json[j] == '+' || json[j] == '.' ||
                                 json[j] == 'e' || json[j] == 'E'))
        ++j;
      std::string token(json.substr(i, j - i));
      if (!valid_number(token)) return std::nullopt;
      if (beyond_64_bits(token)) {
        double v = std::strtod(token.c_str(), nullptr);
        if (std::isinf(v)) {
          out += "null";
        } else {
          char buf[40];
          std::snprintf(buf, sizeof buf, "%.17e", v);
          out += buf;
        }
        changed = true;
      } else {
        out += token;
      }
      i = j;
      continue;
    }
    out.push_back(c);
    ++i;
  }
  if (!changed) return std::nullopt;
  return out;
}

simdjson::simdjson_result<simdjson::dom::element> parse(simdjson::dom::parser& parser, std::string_view json,
                                                        std::string& storage) {
  auto doc = parser.parse(json.data(), json.size());
  if (doc.error() != simdjson::NUMBER_ERROR && doc.error() != simdjson::NUMBER_OUT_OF_RANGE) return doc;
  auto tamed = tame_numbers(json);
  if (!tamed) return doc;
  storage = std::move(*tamed);
  return parser.parse(storage.data(), storage.size());
}

Status validate(std::string_view json) {
  // One parser per thread: simdjson keeps scratch memory sized to the largest document it has seen.
  thread_local simdjson::dom::parser parser;
  static_assert(kMaxDepth == simdjson::DEFAULT_MAX_DEPTH, "the parser's depth limit is kMaxDepth");
  std::string storage;
  auto doc = parse(parser, json, storage);
  if (!doc.error()) return Ok{};
  if (doc.error() == simdjson::DEPTH_ERROR) return make_error("JSON nested more than 1024 deep");
  if (doc.error() == simdjson::UTF8_ERROR) return make_error("JSON text is not valid UTF-8");
  return make_error(std::string("invalid JSON: ") + simdjson::error_message(doc.error()));
}

namespace {
Result<std::string> rewrite(std::string_view json, KeyOrder order) {
  simdjson::dom::parser parser;
  std::string storage;
  auto doc = parse(parser, json, storage);
  if (doc.error()) return make_error("invalid JSON");
  std::string out;
  append_value(out, doc.value_unsafe(), order);
  return out;
}
}  // namespace

Result<std::string> normalize(std::string_view json) { return rewrite(json, KeyOrder::as_stringify); }
Result<std::string> canonical(std::string_view json) { return rewrite(json, KeyOrder::sorted); }

}  // namespace siomq::js
