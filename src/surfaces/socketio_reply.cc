#include "surfaces/socketio_reply.h"

namespace siomq::surfaces {

Request request_of(const net::Message& msg) {
  return Request{msg.event, msg.json, msg.attachments, msg.ack_id.has_value(), msg.outline};
}

void SocketReply::ack(std::string_view json_array) {
  if (ack_id_) socket_.ack(*ack_id_, json_array);
}

void SocketReply::emit(std::string_view event, std::string_view payload) { socket_.emit(event, payload); }

}  // namespace siomq::surfaces
