// The JSON encoding of the stream log family (stream_log.h).
#include "store/stream_log.h"

#include "store/record_json.h"
#include "store/seq_key.h"

namespace siomq::store {
namespace {

using namespace record_json;

constexpr std::array<std::string_view, 9> kStreamLogFields = {"stream",  "seq",         "subject", "headers", "payload_format",
                                                      "payload", "attachments", "time",    "msg_id"};
static_assert(kStreamLogFields.size() <= kMaxFields);

void read_payload(Fields& f, StreamMessage& m) {
  const std::string format = f.string("payload_format");
  if (f.error()) return;
  if (format == "json") {
    m.payload_format = StreamMessage::Payload::json;
    m.payload = f.json_value("payload");
  } else if (format == "bytes") {
    m.payload_format = StreamMessage::Payload::bytes;
    m.payload = f.base64_string("payload");
  } else {
    f.fail_field("payload_format", "must be \"json\" or \"bytes\"");
  }
}

}  // namespace

namespace {

// The fields of a record, as views: encode_stream_message's and put_stream_message's one writer.
struct MessageView {
  std::string_view stream;
  uint64_t seq;
  std::string_view subject;
  const std::string* headers;  // null: none
  bool json_payload;
  std::string_view payload;
  const std::vector<std::string>* attachments;  // null: none
  int64_t time_ms;
  const std::string* msg_id;  // null: none
};

std::string encode(const MessageView& m) {
  std::string out;
  out.reserve(160 + m.stream.size() + m.subject.size() + m.payload.size() * 4 / 3 + (m.headers ? m.headers->size() : 0));
  out.push_back('{');
  append_key(out, "stream");
  append_string(out, m.stream);
  out.push_back(',');
  append_key(out, "seq");
  append_integer(out, m.seq);
  out.push_back(',');
  append_key(out, "subject");
  append_string(out, m.subject);
  out.push_back(',');
  append_key(out, "headers");
  out.append(m.headers ? *m.headers : "null");
  out.push_back(',');
  append_key(out, "payload_format");
  out.append(m.json_payload ? "\"json\"" : "\"bytes\"");
  out.push_back(',');
  append_key(out, "payload");
  if (m.json_payload) out.append(m.payload);
  else append_base64(out, m.payload);
  out.push_back(',');
  append_key(out, "attachments");
  if (m.attachments) append_base64_array(out, *m.attachments);
  else out.append("[]");
  out.push_back(',');
  append_key(out, "time");
  append_time(out, m.time_ms);
  out.push_back(',');
  append_key(out, "msg_id");
  if (m.msg_id) append_string(out, *m.msg_id);
  else out.append("null");
  out.push_back('}');
  return out;
}

}  // namespace

std::string encode_stream_message(const StreamMessage& m) {
  return encode({m.stream, m.seq, m.subject, m.headers ? &*m.headers : nullptr,
                 m.payload_format == StreamMessage::Payload::json, m.payload.str(), &m.attachments, m.time_ms,
                 m.msg_id ? &*m.msg_id : nullptr});
}

Result<StreamMessage> decode_stream_message(std::string_view text) {
  Fields f("stream message", text, kStreamLogFields);
  StreamMessage m;
  m.stream = f.string("stream");
  m.seq = f.integer("seq");
  m.subject = f.string("subject");
  m.headers = f.optional_object("headers");
  read_payload(f, m);
  m.attachments = f.base64_strings("attachments");
  m.time_ms = f.time("time");
  m.msg_id = f.optional_string("msg_id");
  if (f.error()) return *f.error();
  return m;
}

std::string stream_message_key(std::string_view stream, uint64_t seq) {
  std::string key;
  key.reserve(stream.size() + 1 + kSeqKeySize);
  key.append(stream);
  key.push_back('\0');
  append_seq_key(key, seq);
  return key;
}

Op put(const StreamMessage& message) {
  return Op{Family::stream_message, Op::Kind::put, stream_message_key(message.stream, message.seq),
            encode_stream_message(message)};
}

Op put_stream_message(std::string_view stream, uint64_t seq, std::string_view subject, const std::string* headers,
                      std::string_view bytes, int64_t time_ms, const std::string* msg_id) {
  return Op{Family::stream_message, Op::Kind::put, stream_message_key(stream, seq),
            encode({stream, seq, subject, headers, false, bytes, nullptr, time_ms, msg_id})};
}

Op erase_stream_message(std::string_view stream, uint64_t seq) {
  return Op{Family::stream_message, Op::Kind::erase, stream_message_key(stream, seq), {}};
}

}  // namespace siomq::store
