#include "surfaces/bus/answer.h"

#include "surfaces/tyo_mq/socket_endpoint.h"

namespace siomq::surfaces::bus {

void Answer::ok(std::string_view fields, std::vector<Bytes> attachments) const {
  if (!ack_id_ || !to_) return;
  to_->send(ok_frames(nsp_, *ack_id_, fields, std::move(attachments)));
}

void Answer::error(int code, std::string_view message) const { send(error_json(code, message), {}); }

void Answer::send(std::string_view json, std::vector<Bytes> attachments) const {
  if (!ack_id_ || !to_) return;
  to_->send(ack_frames(nsp_, *ack_id_, json, std::move(attachments)));
}

}  // namespace siomq::surfaces::bus
