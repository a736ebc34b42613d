#include "surfaces/bus/answers.h"

#include "wire/socketio.h"

namespace siomq::surfaces::bus {
Frames frames_of(std::string text, std::vector<Bytes> attachments) {
  auto frames = std::make_shared<std::vector<net::OutFrame>>();
  frames->reserve(1 + attachments.size());
  frames->push_back(net::text_frame(std::move(text)));
  for (auto& a : attachments) frames->push_back(net::OutFrame{std::move(a), true});
  return frames;
}

namespace {

void append_member_name(std::string& out, std::string_view name) {
  if (out.back() != '{') out.push_back(',');
  out.push_back('"');
  out.append(name);
  out.append("\":");
}

}  // namespace

std::string error_json(int code, std::string_view message) {
  std::string out = "{\"ok\":false,\"error\":{\"code\":" + std::to_string(code) + ",\"message\":";
  sio::append_json_string(out, message);
  out.append("}}");
  return out;
}

namespace {

// "4" and the ack packet's header, with room for `body` more bytes: the caller appends the array.
std::string ack_header(std::string_view nsp, uint64_t ack_id, size_t body, size_t attachments) {
  std::string text;
  text.reserve(body + nsp.size() + 32);
  text.push_back('4');
  sio::append_text(text, attachments == 0 ? sio::PacketType::kAck : sio::PacketType::kBinaryAck, nsp, ack_id, {},
                   attachments);
  return text;
}

}  // namespace

std::string ack_text(std::string_view nsp, uint64_t ack_id, std::string_view json, size_t attachments) {
  std::string text = ack_header(nsp, ack_id, json.size() + 2, attachments);
  text.push_back('[');
  text.append(json);
  text.push_back(']');
  return text;
}

// Written in place, in one buffer: the answer every stream.pub gets is on the publish path.
std::string ok_text(std::string_view nsp, uint64_t ack_id, std::string_view fields, size_t attachments) {
  std::string text = ack_header(nsp, ack_id, fields.size() + 16, attachments);
  text.append("[{\"ok\":true");
  if (!fields.empty()) {
    text.push_back(',');
    text.append(fields);
  }
  text.append("}]");
  return text;
}

Frames event_frames(std::string_view nsp, std::string_view event, std::string_view json, std::vector<Bytes> attachments) {
  using sio::PacketType;
  std::string text;
  text.reserve(json.size() + event.size() + nsp.size() + 32);  // one allocation: every delivery comes here
  text.push_back('4');
  sio::append_text(text, attachments.empty() ? PacketType::kEvent : PacketType::kBinaryEvent, nsp, std::nullopt, {},
                   attachments.size());
  text.push_back('[');
  sio::append_json_string(text, event);
  text.push_back(',');
  text.append(json);
  text.push_back(']');
  return frames_of(std::move(text), std::move(attachments));
}

void append_message(std::string& out, const broker::BusMessage& m, size_t num, bool with_reply) {
  out.push_back('{');
  if (m.origin) {
    append_member_name(out, "stream");
    sio::append_json_string(out, m.origin->stream);
  }
  append_member_name(out, "subject");
  sio::append_json_string(out, m.subject);
  append_member_name(out, "data");
  out.append("{\"_placeholder\":true,\"num\":" + std::to_string(num) + "}");
  if (!m.header.empty()) {
    append_member_name(out, "header");
    out.append(m.header);
  }
  if (with_reply && !m.reply.empty()) {
    append_member_name(out, "reply");
    sio::append_json_string(out, m.reply);
  }
  if (m.origin) {
    append_member_name(out, "seq");
    out.append(std::to_string(m.origin->seq));
    append_member_name(out, "delivered");
    out.append(std::to_string(m.origin->delivered));
    append_member_name(out, "timestamp_ms");
    out.append(std::to_string(m.origin->timestamp_ms));
  }
  out.push_back('}');
}

Frames msg_frames(const broker::BusMessagePtr& message, std::string_view sid) {
  // Each buffer sized once for its usual content (names, quotes and numbers in the fixed part): a core
  // delivery's texts grew from empty by doubling before, four reallocations a message.
  const broker::BusMessage& m = *message;
  const size_t origin = m.origin ? m.origin->stream.size() + m.origin->consumer.size() + 96 : 0;
  const size_t members = m.subject.size() + m.header.size() + m.reply.size() + origin + 96;
  std::string json;
  json.reserve(sid.size() + members + 16);
  json.append("{\"sid\":");
  sio::append_json_string(json, sid);
  json.push_back(',');
  std::string body;
  body.reserve(members);
  append_message(body, *message, 0, true);
  json.append(body, 1);  // the Message's members after its '{'
  if (message->origin) {
    // Push consumers also say which consumer delivered it (§4 `msg`).
    json.pop_back();
    json.append(",\"consumer\":");
    sio::append_json_string(json, message->origin->consumer);
    json.push_back('}');
  }
  return event_frames("/", "msg", json, {data_of(message)});
}

}  // namespace siomq::surfaces::bus
