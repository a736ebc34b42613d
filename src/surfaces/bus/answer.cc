#include "surfaces/bus/answer.h"

#include "surfaces/tyo_mq/socket_endpoint.h"

namespace siomq::surfaces::bus {

void Answer::ok(std::string_view fields, std::vector<Bytes> attachments) const {
  if (!ack_id_ || !to_) return;
  std::string text = ok_text(nsp_, *ack_id_, fields, attachments.size());
  if (attachments.empty()) return to_->send_text(std::move(text));
  to_->send(frames_of(std::move(text), std::move(attachments)));
}

void Answer::error(int code, std::string_view message) const { send(error_json(code, message), {}); }

void Answer::send(std::string_view json, std::vector<Bytes> attachments) const {
  if (!ack_id_ || !to_) return;
  std::string text = ack_text(nsp_, *ack_id_, json, attachments.size());
  if (attachments.empty()) return to_->send_text(std::move(text));
  to_->send(frames_of(std::move(text), std::move(attachments)));
}

}  // namespace siomq::surfaces::bus
