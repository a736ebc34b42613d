#include "surfaces/tyo_mq/frames.h"

#include "net/socket.h"
#include "wire/socketio.h"

namespace siomq::surfaces {

FramesPtr event_frames(std::string_view event, std::string_view payload, std::vector<std::string> attachments) {
  return std::make_shared<const std::vector<net::OutFrame>>(net::encode_emit("/", event, payload, std::move(attachments)));
}

FramesPtr ack_frames(uint64_t ack_id, std::string_view json_array) {
  return std::make_shared<const std::vector<net::OutFrame>>(net::encode_event("/", ack_id, true, json_array, {}));
}

std::string error_object(int code, std::string_view message) {
  std::string out = "{\"message\":";
  sio::append_json_string(out, message);
  out += ",\"code\":" + std::to_string(code) + "}";
  return out;
}

}  // namespace siomq::surfaces
