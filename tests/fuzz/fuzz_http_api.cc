// Fuzzes the HTTP API's request reading (surfaces/http/api_request.h) on raw bytes: the path split into
// segments and each segment decoded, the bearer token of an Authorization header, and POST /api/realms'
// body. Checks the invariants the routes rely on.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "surfaces/http/api_request.h"

namespace api = siomq::surfaces::http;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);

  if (auto segments = api::path_segments(input)) {
    if (segments->empty() || segments->size() > api::kMaxPathSegments) __builtin_trap();
    for (std::string_view s : *segments) {
      if (s.find('/') != std::string_view::npos || s.find('?') != std::string_view::npos) __builtin_trap();
      if (auto decoded = api::decode_segment(s)) {
        if (decoded->size() > s.size()) __builtin_trap();
        for (char c : *decoded) {
          if (static_cast<unsigned char>(c) < 0x20) __builtin_trap();
        }
      }
    }
  }

  if (auto token = api::bearer_token(input)) {
    if (token->empty() || token->size() >= input.size()) __builtin_trap();
    if (token->front() == ' ' || token->back() == ' ') __builtin_trap();
  }

  if (auto r = api::parse_realm_request(input)) {
    if (r->realm.empty() || r->manager_key.empty() || size > api::kMaxRealmRequestBody) __builtin_trap();
  } else if (r.error().code != 400) {
    __builtin_trap();
  }
  return 0;
}
