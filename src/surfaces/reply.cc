#include "surfaces/reply.h"

#include "wire/socketio.h"

namespace siomq::surfaces {

std::string error_reply(int code, std::string_view message) {
  std::string out = "{\"ok\":false,\"code\":" + std::to_string(code) + ",\"message\":";
  sio::append_json_string(out, message);
  out.push_back('}');
  return out;
}

}  // namespace siomq::surfaces
