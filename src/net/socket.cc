#include "net/socket.h"

#include "net/engine_session.h"
#include "net/sio_server.h"

namespace siomq::net {

std::vector<OutFrame> encode_event(std::string_view nsp, std::optional<uint64_t> ack_id, bool is_ack,
                                   std::string_view json_array, std::vector<std::string> attachments) {
  using sio::PacketType;
  PacketType type = attachments.empty() ? (is_ack ? PacketType::kAck : PacketType::kEvent)
                                        : (is_ack ? PacketType::kBinaryAck : PacketType::kBinaryEvent);
  std::string text;
  text.reserve(json_array.size() + nsp.size() + 24);
  text.push_back('4');  // Engine.IO message
  sio::append_text(text, type, nsp, ack_id, json_array, attachments.size());
  std::vector<OutFrame> frames;
  frames.reserve(1 + attachments.size());
  frames.push_back(text_frame(std::move(text)));
  for (auto& a : attachments) frames.push_back(binary_frame(std::move(a)));
  return frames;
}

std::vector<OutFrame> encode_emit(std::string_view nsp, std::string_view event, std::string_view args,
                                  std::vector<std::string> attachments) {
  using sio::PacketType;
  std::string text;
  text.reserve(event.size() + args.size() + nsp.size() + 32);
  text.push_back('4');  // Engine.IO message
  sio::append_text(text, attachments.empty() ? PacketType::kEvent : PacketType::kBinaryEvent, nsp, std::nullopt, {},
                   attachments.size());
  text.push_back('[');
  sio::append_json_string(text, event);
  if (!args.empty()) {
    text.push_back(',');
    text.append(args);
  }
  text.push_back(']');
  std::vector<OutFrame> frames;
  frames.reserve(1 + attachments.size());
  frames.push_back(text_frame(std::move(text)));
  for (auto& a : attachments) frames.push_back(binary_frame(std::move(a)));
  return frames;
}

Socket::Socket(SioConnection& connection, std::string nsp, std::string id)
    : connection_(connection), nsp_(std::move(nsp)), id_(std::move(id)) {}

EngineSession& Socket::session() { return connection_.session(); }
int Socket::protocol() const { return connection_.session().protocol(); }
const std::string& Socket::remote_address() const { return connection_.session().remote_address(); }
const std::string& Socket::forwarded_for() const { return connection_.session().forwarded_for(); }

void Socket::emit(std::string_view event, std::string_view args, std::vector<std::string> attachments) {
  if (!connected_) return;
  send_frames(encode_emit(nsp_, event, args, std::move(attachments)));
}

void Socket::ack(uint64_t id, std::string_view json_array, std::vector<std::string> attachments) {
  if (!connected_) return;
  auto frames = encode_event(nsp_, id, true, json_array, std::move(attachments));
  send_frames(frames);
}

void Socket::send_frames(std::span<const OutFrame> frames) {
  if (!connected_) return;
  for (const auto& f : frames) connection_.send(f);
}

void Socket::when_sent(SentReceipt done) {
  if (!connected_) return done(false);
  session().when_sent(std::move(done));
}

void Socket::join(const std::string& room) {
  if (!connected_) return;
  if (!rooms_) rooms_ = std::make_unique<std::unordered_set<std::string>>();
  if (!rooms_->insert(room).second) return;
  connection_.server().room_join(*this, room);
}

void Socket::leave(const std::string& room) {
  if (!rooms_ || rooms_->erase(room) == 0) return;
  connection_.server().room_leave(*this, room);
}

void Socket::disconnect(bool close_connection) {
  if (!connected_) return;
  std::string text = "4";
  sio::append_text(text, sio::PacketType::kDisconnect, nsp_, std::nullopt, {});
  connection_.send(text_frame(std::move(text)));
  EngineSession& session = connection_.session();
  connection_.remove(*this, "server namespace disconnect");  // destroys *this
  if (close_connection) session.close("server namespace disconnect", true);
}

}  // namespace siomq::net
