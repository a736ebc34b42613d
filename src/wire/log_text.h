// Client-supplied text as it may appear in a log line: at most `cap` bytes, control characters and
// backslashes escaped, so that no client can forge log lines (a newline), hide them (an escape
// sequence) or fill the log (a 1 MiB HELLO). Use it for every value a client chose.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace siomq {

inline std::string log_text(std::string_view s, size_t cap = 200) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(std::min(s.size(), cap) + 16);
  for (size_t i = 0; i < s.size() && i < cap; ++i) {
    auto c = static_cast<unsigned char>(s[i]);
    if (c == '\\') {
      out += "\\\\";
    } else if (c < 0x20 || c == 0x7f) {
      out += "\\x";
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    } else {
      out.push_back(static_cast<char>(c));
    }
  }
  if (s.size() > cap) out += "…(+" + std::to_string(s.size() - cap) + " bytes)";
  return out;
}

}  // namespace siomq
