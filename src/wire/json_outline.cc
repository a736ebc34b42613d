#include "wire/json_outline.h"

#include <simdjson.h>

#include <limits>

#include "wire/js_json.h"

namespace siomq::json {
namespace {

constexpr size_t kNpos = std::string_view::npos;

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

size_t skip_space(std::string_view s, size_t i) {
  while (i < s.size() && is_space(s[i])) ++i;
  return i;
}

// The bytes that end a run of plain string content: the closing quote, an escape, a control character.
struct StringStops {
  std::array<bool, 256> stops{};
  constexpr StringStops() {
    for (int c = 0; c < 0x20; ++c) stops[c] = true;
    stops['"'] = true;
    stops['\\'] = true;
  }
};
constexpr StringStops kStringStops;

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// The code unit of the four hex digits at s[i], or -1.
int hex4(std::string_view s, size_t i) {
  if (i + 4 > s.size()) return -1;
  int v = 0;
  for (size_t k = i; k < i + 4; ++k) {
    int d = hex_digit(s[k]);
    if (d < 0) return -1;
    v = v * 16 + d;
  }
  return v;
}

// One past the closing quote of the string whose opening quote is s[i], or npos when it is malformed: a
// raw control character, an unknown escape, or a surrogate escape that is not a high one followed by a
// low one (simdjson refuses those, so js::validate does). `*escaped` is set when it holds an escape.
size_t string_end(std::string_view s, size_t i, bool* escaped) {
  for (++i;;) {
    while (i < s.size() && !kStringStops.stops[static_cast<unsigned char>(s[i])]) ++i;
    if (i >= s.size() || s[i] != '\\') return i < s.size() && s[i] == '"' ? i + 1 : kNpos;
    *escaped = true;
    if (i + 1 >= s.size()) return kNpos;
    switch (s[i + 1]) {
      case '"': case '\\': case '/': case 'b': case 'f': case 'n': case 'r': case 't':
        i += 2;
        continue;
      case 'u':
        break;
      default:
        return kNpos;
    }
    int unit = hex4(s, i + 2);
    i += 6;
    if (unit < 0 || (unit >= 0xdc00 && unit <= 0xdfff)) return kNpos;
    if (unit >= 0xd800 && unit <= 0xdbff) {
      if (i + 1 >= s.size() || s[i] != '\\' || s[i + 1] != 'u') return kNpos;
      int low = hex4(s, i + 2);
      if (low < 0xdc00 || low > 0xdfff) return kNpos;
      i += 6;
    }
  }
}

bool is_digit(char c) { return c >= '0' && c <= '9'; }

size_t digits_end(std::string_view s, size_t i) {
  while (i < s.size() && is_digit(s[i])) ++i;
  return i;
}

// One past the number starting at s[i] (JSON's grammar: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?),
// or npos. What follows it is the caller's to check.
size_t number_end(std::string_view s, size_t i) {
  if (s[i] == '-') ++i;
  if (i >= s.size() || !is_digit(s[i])) return kNpos;
  i = s[i] == '0' ? i + 1 : digits_end(s, i);
  if (i < s.size() && s[i] == '.') {
    size_t first = i + 1;
    i = digits_end(s, first);
    if (i == first) return kNpos;
  }
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
    size_t first = i;
    i = digits_end(s, first);
    if (i == first) return kNpos;
  }
  return i;
}

size_t literal_end(std::string_view s, size_t i, std::string_view word) {
  return s.substr(i, word.size()) == word ? i + word.size() : kNpos;
}

Error invalid() { return make_error("invalid JSON"); }

}  // namespace

std::string_view Outline::element(std::string_view text, size_t i) const {
  if (i >= count_ || i >= kElements || !describes(text)) return {};
  return text.substr(elements_[i].begin, elements_[i].end - elements_[i].begin);
}

std::optional<std::span<const Outline::Member>> Outline::members_of(std::string_view text, std::string_view object) const {
  // (Addresses compared as integers: `object` may point into another buffer altogether.)
  const auto from = reinterpret_cast<uintptr_t>(text.data());
  const auto where = reinterpret_cast<uintptr_t>(object.data());
  if (!describes(text) || where < from || where > from + text.size()) return std::nullopt;
  const auto at = static_cast<size_t>(where - from);
  for (size_t i = 0; i < count_ && i < kElements; ++i) {
    const Element& e = elements_[i];
    if (e.begin != at || e.end - e.begin != object.size()) continue;
    if (!e.object || !e.complete) return std::nullopt;
    return std::span<const Member>(members_.data() + e.first_member, e.members);
  }
  return std::nullopt;
}

// A loop over three states (a value is due, an object's key is due, a value has ended) with the open
// containers on a fixed stack of js::kMaxDepth entries: no recursion, each byte looked at a bounded
// number of times. The notes are taken as the root array's elements and their members start and end.
Status validate(std::string_view s, Outline* outline) {
  if (outline) outline->clear();
  if (!simdjson::validate_utf8(s.data(), s.size())) return make_error("JSON text is not valid UTF-8");
  if (outline) {
    if (s.size() >= std::numeric_limits<uint32_t>::max()) outline = nullptr;
    else outline->size_ = s.size();
  }
  enum class Kind : uint8_t { array, object };
  std::array<Kind, js::kMaxDepth> open;
  size_t depth = 0;
  // The element being read (when the root is an array and it is one of the first kElements) and the
  // member of it being read, as noted in `outline`; null when nothing is being noted.
  Outline::Element* element = nullptr;
  Outline::Member* member = nullptr;
  enum class Next { value, key, ended };
  Next next = Next::value;
  size_t i = skip_space(s, 0);
  for (;;) {
    switch (next) {
      case Next::value: {
        if (i >= s.size()) return invalid();
        if (depth >= js::kMaxDepth) return make_error("JSON nested more than 1024 deep");
        if (outline && depth == 1 && outline->root_array_ && outline->count_ < Outline::kElements) {
          element = &outline->elements_[outline->count_];
          *element = Outline::Element{};
          element->begin = static_cast<uint32_t>(i);
        }
        if (member && depth == 2) member->value_begin = static_cast<uint32_t>(i);  // its end when it ends
        const char c = s[i];
        if (c == '[' || c == '{') {
          if (depth == 0 && outline) outline->root_array_ = c == '[';
          if (depth == 1 && element && c == '{') {
            element->object = element->complete = true;
            element->first_member = static_cast<uint16_t>(outline->used_members_);
          }
          open[depth++] = c == '[' ? Kind::array : Kind::object;
          i = skip_space(s, i + 1);
          if (i < s.size() && s[i] == (c == '[' ? ']' : '}')) {
            --depth;
            ++i;
            next = Next::ended;
          } else {
            next = c == '[' ? Next::value : Next::key;
          }
          continue;
        }
        bool escaped = false;
        if (c == '"') i = string_end(s, i, &escaped);
        else if (c == 't') i = literal_end(s, i, "true");
        else if (c == 'f') i = literal_end(s, i, "false");
        else if (c == 'n') i = literal_end(s, i, "null");
        else if (c == '-' || is_digit(c)) i = number_end(s, i);
        else return invalid();
        if (i == kNpos) return invalid();
        next = Next::ended;
        continue;
      }
      case Next::key: {
        if (i >= s.size() || s[i] != '"') return invalid();
        size_t begin = i;
        bool escaped = false;
        i = string_end(s, i, &escaped);
        if (i == kNpos) return invalid();
        if (depth == 2) member = nullptr;
        if (depth == 2 && element && element->object && element->complete) {
          if (outline->used_members_ < Outline::kMembers) {
            member = &outline->members_[outline->used_members_++];
            member->key_begin = static_cast<uint32_t>(begin);
            member->key_end = static_cast<uint32_t>(i);
            member->key_escaped = escaped;
            ++element->members;
          } else {
            element->complete = false;  // too many to note: its readers scan it
          }
        }
        i = skip_space(s, i);
        if (i >= s.size() || s[i] != ':') return invalid();
        i = skip_space(s, i + 1);
        next = Next::value;
        continue;
      }
      case Next::ended: {
        // The value that ends at i: a noted member's, or a noted element's.
        if (depth == 2 && member) {
          member->value_end = static_cast<uint32_t>(i);
          member = nullptr;
        } else if (depth == 1 && outline && outline->root_array_) {
          if (element) element->end = static_cast<uint32_t>(i);
          element = nullptr;
          ++outline->count_;
        }
        i = skip_space(s, i);
        if (depth == 0) {
          if (i != s.size()) return invalid();
          if (outline) outline->outlined_ = true;
          return Ok{};
        }
        if (i >= s.size()) return invalid();
        const bool in_array = open[depth - 1] == Kind::array;
        if (s[i] == ',') {
          i = skip_space(s, i + 1);
          next = in_array ? Next::value : Next::key;
        } else if (s[i] == (in_array ? ']' : '}')) {
          --depth;
          ++i;
        } else {
          return invalid();
        }
        continue;
      }
    }
  }
}

}  // namespace siomq::json
