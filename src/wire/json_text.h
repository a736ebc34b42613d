// Small JSON texts built by hand, for payloads whose shape is fixed (presence events, stored specs): a
// string literal, and an object from keys and value texts already encoded. Strings are escaped as
// JSON.stringify escapes them (sio::append_json_string). Pure; any thread.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>

#include "wire/socketio.h"

namespace siomq::json_text {

// "s", escaped.
inline std::string quoted(std::string_view s) {
  std::string out;
  sio::append_json_string(out, s);
  return out;
}

// {"k":v,...} from keys and JSON value texts, in the order given.
inline std::string object(std::initializer_list<std::pair<std::string_view, std::string>> fields) {
  std::string out = "{";
  for (const auto& [k, v] : fields) {
    if (out.size() > 1) out.push_back(',');
    sio::append_json_string(out, k);
    out.push_back(':');
    out += v;
  }
  out.push_back('}');
  return out;
}

// "name":"text", and "name":n, — one member and its comma, for objects written field by field (the
// caller writes the braces and drops the last comma).
inline void append_member(std::string& out, std::string_view name, std::string_view text) {
  out.push_back('"');
  out.append(name);
  out.append("\":");
  sio::append_json_string(out, text);
  out.push_back(',');
}
inline void append_member(std::string& out, std::string_view name, uint64_t n) {
  out.push_back('"');
  out.append(name);
  out.append("\":");
  out.append(std::to_string(n));
  out.push_back(',');
}

}  // namespace siomq::json_text
