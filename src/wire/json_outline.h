// One pass over a packet's JSON that both validates it and notes where its parts are, so that the readers
// after it (the event name, a request's payload object and its fields) find them without scanning again.
//
// json::validate accepts exactly what js::validate accepts (wire/js_json.h: one JSON.parse-able value,
// valid UTF-8, at most js::kMaxDepth deep; escapes of lone surrogates refused, as simdjson refuses them),
// in time linear in the text's size, without recursion, and without allocating. The differential fuzz
// target tests/fuzz/fuzz_json_outline.cc holds it to that. Numbers are checked against JSON's grammar only:
// JSON.parse takes any magnitude, and so does js::validate (it tames what simdjson's 64 bits cannot hold).
//
// What it notes, in an Outline the caller owns: whether the root is an array; its first kElements
// elements; and for those that are objects, their members (raw key and raw value), kMembers at most in all.
// An element with more members than fit is marked as not outlined, and its readers scan it themselves
// (json_spans). Notes are offsets, read against the text they were taken from (or a copy of it: a packet's
// text moves from the decoder to its handler), which the reader passes back; a text of another size is
// not the outlined one and reads as nothing noted. No pointer into the text is kept.
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

  // (No default values: a member is written whole when it is noted, and an Outline is made per packet.)
  struct Member {
    uint32_t key_begin, key_end;      // the raw key, quotes included
    uint32_t value_begin, value_end;  // the raw value
    bool key_escaped;  // the key holds a backslash escape: unescape it before comparing
    std::string_view key(std::string_view text) const { return text.substr(key_begin, key_end - key_begin); }
    std::string_view value(std::string_view text) const { return text.substr(value_begin, value_end - value_begin); }
  };

  // Makes it describe nothing (cheap: the notes themselves are written before they are read).
  void clear() {
    size_ = count_ = used_members_ = 0;
    outlined_ = root_array_ = false;
  }
  // Whether `text` is (a copy of) the outlined text: at least its size matches.
  bool describes(std::string_view text) const { return text.size() == size_ && outlined_; }
  // Whether the text's root value is an array, and how many elements it has (all of them, noted or not).
  bool root_is_array() const { return root_array_; }
  size_t size() const { return count_; }
  // Element `i` of the root array, raw, in `text`; empty when i >= min(size(), kElements) or `text` is
  // not the outlined one.
  std::string_view element(std::string_view text, size_t i) const;
  // The members of `object` when it is a noted element of `text` (a view into it, as element() gives)
  // and all its members were noted; nullopt otherwise (read it with json_spans then).
  std::optional<std::span<const Member>> members_of(std::string_view text, std::string_view object) const;

 private:
  friend Status validate(std::string_view json, Outline* outline);
  struct Element {  // value-initialised (Element{}) when its element starts
    uint32_t begin, end;
    uint16_t first_member, members;
    bool object, complete;
  };
  size_t size_ = 0;  // the outlined text's
  bool outlined_ = false;
  bool root_array_ = false;
  size_t count_ = 0;
  size_t used_members_ = 0;
  std::array<Element, kElements> elements_;
  std::array<Member, kMembers> members_;
};

// Validates `json` as described above; when `outline` is given, fills it (only texts below 4 GiB are
// outlined; a longer one is validated and describes nothing).
Status validate(std::string_view json, Outline* outline = nullptr);

}  // namespace siomq::json
