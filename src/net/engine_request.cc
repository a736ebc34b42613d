#include "net/engine_request.h"

#include "net/http_request.h"

namespace siomq::net {

std::string_view engine_error_message(EngineError e) {
  switch (e) {
    case EngineError::kTransportUnknown: return "Transport unknown";
    case EngineError::kUnknownSid: return "Session ID unknown";
    case EngineError::kBadHandshakeMethod: return "Bad handshake method";
    case EngineError::kBadRequest: return "Bad request";
    case EngineError::kForbidden: return "Forbidden";
    case EngineError::kUnsupportedProtocolVersion: return "Unsupported protocol version";
  }
  return "Bad request";
}

EngineRequest classify_engine_request(std::string_view method, std::string_view target, std::string_view upgrade,
                                      std::string_view path, bool allow_eio3) {
  EngineRequest r;
  Target t = parse_target(target);
  if (t.path.substr(0, path.size()) != path) return r;
  if (method == "OPTIONS") {
    r.kind = EngineRequest::kPreflight;
    return r;
  }
  auto fail = [&](EngineError e) {
    r.kind = EngineRequest::kError;
    r.error = e;
    return r;
  };
  auto transport = t.param("transport").value_or("");
  if (transport != "polling" && transport != "websocket") return fail(EngineError::kTransportUnknown);
  r.websocket = transport == "websocket";
  auto eio = t.param("EIO").value_or("");
  if (eio == "4") r.protocol = 4;
  else if (eio == "3" && allow_eio3) r.protocol = 3;
  else return fail(EngineError::kUnsupportedProtocolVersion);
  bool is_upgrade = header_has_token(upgrade, "websocket");
  if (r.websocket && !is_upgrade) return fail(EngineError::kBadRequest);

  // An empty sid is no sid (Engine.IO tests it for truthiness): the request is a handshake.
  if (auto sid = t.param("sid"); sid && !sid->empty()) {
    if (!r.websocket && method != "GET" && method != "POST") return fail(EngineError::kBadRequest);
    r.kind = EngineRequest::kSession;
    r.sid = std::string(*sid);
    return r;
  }
  if (method != "GET") return fail(EngineError::kBadHandshakeMethod);
  r.kind = EngineRequest::kHandshake;
  return r;
}

}  // namespace siomq::net
