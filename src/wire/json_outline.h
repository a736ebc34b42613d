// One pass over a packet's JSON that both validates it and notes where its parts are, so that the readers
// after it (the event name, a request's payload object and its fields) find them without scanning again.
//
// json::validate accepts exactly what js::validate accepts (wire/js_json.h: one JSON.parse-able value,
// valid UTF-8, at most js::kMaxDepth deep; escapes of lone surrogates refused, as simdjson refuses them),
// in time linear in the text's size, without recursion, and without allocating. The differential fuzz
// target tests/fuzz/json_outline_fuzz.cc holds it to that. Numbers are checked against JSON's grammar only:
// JSON.parse takes any magnitude, and so does js::validate (it tames what simdjson's 64 bits cannot hold).
//
// What it notes, in an Outline the caller owns: whether the root is an array; its first kElements
// elements (as offsets in the text); and for those that are objects, their members (raw key and raw
// value), kMembers at most in all. An element with more members than fit is marked as not outlined, and
// its readers scan it themselves (json_spans). The Outline keeps the address of the text it describes: a
// view is matched to a noted element by its address, so a view into any other text (a payload sent as a
// JSON string and unescaped elsewhere) is never taken for one. The text must outlive the Outline's use.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "wire/result.h"

namespace siomq::json {

class Outline {
 public:
  static constexpr size_t kElements = 8;
  static constexpr size_t kMembers = 32;

  struct Member {
    std::string_view key;    // the raw key, quotes included
    std::string_view value;  // the raw value
    bool key_escaped = false;  // the key holds a backslash escape: unescape it before comparing
  };

  // Whether the text's root value is an array, and how many elements it has (all of them, noted or not).
  bool root_is_array() const { return root_array_; }
  size_t size() const { return count_; }
  // Element `i` of the root array, raw; empty when i >= min(size(), kElements).
  std::string_view element(size_t i) const;
  // The members of `object` when it is a noted element of the outlined text and all its members were
  // noted; nullopt otherwise (read it with json_spans then).
  std::optional<std::span<const Member>> members_of(std::string_view object) const;

 private:
  friend Status validate(std::string_view json, Outline* outline);
  struct Element {
    uint32_t begin = 0, end = 0;
    uint16_t first_member = 0, members = 0;
    bool object = false, complete = false;
  };
  const char* text_ = nullptr;
  bool root_array_ = false;
  size_t count_ = 0;
  size_t used_members_ = 0;
  std::array<Element, kElements> elements_{};
  std::array<Member, kMembers> members_{};
};

// Validates `json` as described above; when `outline` is given, fills it (only texts below 4 GiB are
// outlined; a longer one is validated and left with size() 0).
Status validate(std::string_view json, Outline* outline = nullptr);

}  // namespace siomq::json
