#include "surfaces/tyo_mq/ping.h"

#include <simdjson.h>

#include <algorithm>
#include <unordered_map>
#include <utility>
#include <vector>

#include "wire/js_json.h"
#include "wire/socketio.h"

namespace siomq::surfaces {
namespace {

// The reply's fields in insertion order (key, JSON text of the value), with a hash index so that setting
// one is constant time: a spread string of 40,000 characters made 40,000 scans of the list before.
struct Fields {
  std::vector<std::pair<std::string, std::string>> list;
  std::unordered_map<std::string, size_t> index;
};

void set_field(Fields& fields, std::string key, std::string value) {
  auto [it, added] = fields.index.emplace(key, fields.list.size());
  if (!added) fields.list[it->second].second = std::move(value);
  else fields.list.emplace_back(std::move(key), std::move(value));
}

// Object spread of a string copies its UTF-16 code units as "0", "1", …; a character outside the
// BMP becomes two lone surrogates, which JSON.stringify writes as \udXXX escapes.
void spread_string(Fields& fields, std::string_view s) {
  size_t index = 0;
  for (size_t i = 0; i < s.size();) {
    auto c = static_cast<unsigned char>(s[i]);
    size_t len = c < 0x80 ? 1 : c < 0xe0 ? 2 : c < 0xf0 ? 3 : 4;
    len = std::min(len, s.size() - i);
    if (len == 4) {
      uint32_t cp = ((c & 0x07u) << 18) | ((static_cast<unsigned char>(s[i + 1]) & 0x3fu) << 12) |
                    ((static_cast<unsigned char>(s[i + 2]) & 0x3fu) << 6) | (static_cast<unsigned char>(s[i + 3]) & 0x3fu);
      cp -= 0x10000;
      char buf[16];
      std::snprintf(buf, sizeof buf, "\"\\u%04x\"", 0xd800 + (cp >> 10));
      set_field(fields, std::to_string(index++), buf);
      std::snprintf(buf, sizeof buf, "\"\\u%04x\"", 0xdc00 + (cp & 0x3ff));
      set_field(fields, std::to_string(index++), buf);
    } else {
      std::string v;
      sio::append_json_string(v, s.substr(i, len));
      set_field(fields, std::to_string(index++), std::move(v));
    }
    i += len;
  }
}

}  // namespace

std::string iso_timestamp(std::chrono::system_clock::time_point t) {
  return js::iso_date(std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count());
}

std::string ping_reply(std::string_view args, std::string_view timestamp) {
  Fields fields;
  thread_local simdjson::dom::parser parser;  // reused: a parser's buffers are costly to allocate per call
  std::string tamed;
  auto doc = js::parse(parser, args, tamed);
  if (!doc.error()) {
    auto payload = doc.value_unsafe().at(1);
    if (!payload.error()) {
      auto v = payload.value_unsafe();
      if (v.is_object()) {
        simdjson::dom::object obj = v.get_object().value_unsafe();
        for (auto field : obj) {
          std::string text;
          js::append_value(text, field.value);
          set_field(fields, std::string(field.key), std::move(text));
        }
      } else if (v.is_array()) {
        size_t i = 0;
        simdjson::dom::array arr = v.get_array().value_unsafe();
        for (auto el : arr) {
          std::string text;
          js::append_value(text, el);
          set_field(fields, std::to_string(i++), std::move(text));
        }
      } else if (v.is_string()) {
        spread_string(fields, v.get_string().value_unsafe());
      }
    }
  }
  set_field(fields, "pong", "\"PONG\"");
  std::string ts;
  sio::append_json_string(ts, timestamp);
  set_field(fields, "timestamp", std::move(ts));

  // Array-index keys come first, in numeric order, as in every JavaScript object.
  auto& list = fields.list;
  std::stable_partition(list.begin(), list.end(), [](const auto& f) { return js::is_array_index(f.first); });
  auto index_end = std::find_if(list.begin(), list.end(), [](const auto& f) { return !js::is_array_index(f.first); });
  std::sort(list.begin(), index_end, [](const auto& a, const auto& b) {
    return a.first.size() != b.first.size() ? a.first.size() < b.first.size() : a.first < b.first;
  });
  std::string out = "{";
  for (size_t i = 0; i < list.size(); ++i) {
    if (i) out.push_back(',');
    sio::append_json_string(out, list[i].first);
    out.push_back(':');
    out += list[i].second;
  }
  out.push_back('}');
  return out;
}

}  // namespace siomq::surfaces
