// Fuzzes HTTP publish's request-target parser (surfaces/http/http_target.h) and the SSE frame builder:
// whatever the bytes, the parse is bounded (segments, parameters, sizes) and its parts are clean UTF-8
// without control characters; a frame never carries a raw newline inside its data line.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "surfaces/http/http_target.h"
#include "surfaces/http/sse_frame.h"

using namespace siomq::surfaces::http;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  auto target = parse_target(input);
  if (target) {
    if (target->segments.size() > kMaxSegments || target->query.size() > kMaxQueryParams) __builtin_trap();
    for (const auto& s : target->segments) {
      for (char c : s) {
        if (static_cast<unsigned char>(c) < 0x20) __builtin_trap();
      }
    }
    (void)target->param("event");
  }
  size_t cut = size / 2;
  auto frame = sse_frame(input.substr(0, cut), input.substr(cut));
  if (frame) {
    // id line, event line, data line, blank line: exactly four newlines.
    size_t newlines = 0;
    for (char c : *frame) newlines += c == '\n';
    if (newlines != 4) __builtin_trap();
  }
  (void)delivery_event(input);
  (void)frame_safe_id(input);
  return 0;
}
