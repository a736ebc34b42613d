// libFuzzer target for the one-pass JSON validator (wire/json_outline): the input is a JSON text.
//
// Differential: json::validate must accept exactly what js::validate (simdjson, numbers tamed as
// JSON.parse takes them) accepts, with and without an outline. When it accepts a root array, what the
// outline noted must be what json_spans finds by scanning again: the element count, the first
// Outline::kElements elements, and the members of each noted object element (raw value, key unescaped).
#include <cstdint>
#include <string>
#include <string_view>

#include "wire/js_json.h"
#include "wire/json_outline.h"
#include "wire/json_spans.h"

namespace {

void check(bool ok) {
  if (!ok) __builtin_trap();
}

void check_outline(std::string_view text, const siomq::json::Outline& o) {
  using siomq::json::Outline;
  if (!o.root_is_array()) {
    check(o.size() == 0);
    return;
  }
  auto elements = siomq::json_spans::array_elements(text);
  check(elements.ok());
  check(o.size() == elements->size());
  for (size_t i = 0; i < elements->size() && i < Outline::kElements; ++i) {
    std::string_view e = o.element(text, i);
    check(e == (*elements)[i]);
    check(e.data() == (*elements)[i].data());
    auto noted = o.members_of(text, e);
    if (e.front() != '{') {
      check(!noted.has_value());
      continue;
    }
    if (!noted) continue;  // more members than it keeps: left to the readers
    auto scanned = siomq::json_spans::object_members(e);
    check(scanned.ok());
    check(noted->size() == scanned->size());
    for (size_t k = 0; k < noted->size(); ++k) {
      const auto& m = (*noted)[k];
      check(m.value(text) == (*scanned)[k].value);
      auto key = siomq::json_spans::unescape(m.key(text));
      check(key.ok() && *key == (*scanned)[k].key);
      check(m.key_escaped == (m.key(text).find('\\') != std::string_view::npos));
    }
  }
  check(o.element(text, std::min<size_t>(elements->size(), Outline::kElements)).empty());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const bool reference = siomq::js::validate(text).ok();
  siomq::json::Outline outline;
  const bool ours = siomq::json::validate(text, &outline).ok();
  check(ours == reference);
  check(siomq::json::validate(text).ok() == reference);
  if (ours) check_outline(text, outline);
  else check(!outline.describes(text));
  return 0;
}
