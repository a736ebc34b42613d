// What an HTTP request under the Engine.IO path asks for, decided without touching any session:
// the checks Engine.IO makes before a handshake or a request for an existing session.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace siomq::net {

// Engine.IO's error codes for rejected requests.
enum class EngineError { kTransportUnknown = 0, kUnknownSid = 1, kBadHandshakeMethod = 2, kBadRequest = 3,
                         kForbidden = 4, kUnsupportedProtocolVersion = 5 };

std::string_view engine_error_message(EngineError e);

struct EngineRequest {
  enum Kind { kNotEngine, kPreflight, kError, kHandshake, kSession } kind = kNotEngine;
  EngineError error = EngineError::kBadRequest;  // for kError
  int protocol = 4;
  bool websocket = false;  // transport=websocket
  std::string sid;         // for kSession
};

// `path` is the configured Engine.IO path ("/socket.io/"); `upgrade` the Upgrade header's value.
EngineRequest classify_engine_request(std::string_view method, std::string_view target, std::string_view upgrade,
                                      std::string_view path, bool allow_eio3);

}  // namespace siomq::net
