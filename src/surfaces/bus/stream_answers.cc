#include "surfaces/bus/stream_answers.h"

#include "wire/socketio.h"

namespace siomq::surfaces::bus {

std::string stream_meta_json(const broker::StreamInfo& info) {
  std::string out = broker::to_json(info.config);
  out.pop_back();
  out += ",\"created_ms\":" + std::to_string(info.created_ms) + "}";
  return out;
}

std::string stream_state_json(const broker::StreamInfo& info) {
  const broker::StreamState& s = info.state;
  return "{\"messages\":" + std::to_string(s.messages) + ",\"bytes\":" + std::to_string(s.bytes) +
         ",\"first_seq\":" + std::to_string(s.first_seq) + ",\"last_seq\":" + std::to_string(s.last_seq) +
         ",\"first_ts_ms\":" + std::to_string(s.first_ts_ms) + ",\"last_ts_ms\":" + std::to_string(s.last_ts_ms) +
         ",\"consumer_count\":" + std::to_string(info.consumer_count) + "}";
}

std::string consumer_info_json(const broker::ConsumerInfo& i) {
  auto pair = [](uint64_t consumer, uint64_t stream) {
    return "{\"consumer_seq\":" + std::to_string(consumer) + ",\"stream_seq\":" + std::to_string(stream) + "}";
  };
  std::string out = "{\"stream\":";
  sio::append_json_string(out, i.config.stream);
  out += ",\"name\":";
  sio::append_json_string(out, i.config.name);
  return out + ",\"config\":" + broker::to_json(i.config) +
         ",\"delivered\":" + pair(i.delivered_consumer, i.delivered_stream) +
         ",\"ack_floor\":" + pair(i.ack_floor_consumer, i.ack_floor_stream) +
         ",\"num_pending\":" + std::to_string(i.num_pending) + ",\"num_ack_pending\":" + std::to_string(i.num_ack_pending) +
         ",\"num_redelivered\":" + std::to_string(i.num_redelivered) + ",\"num_waiting\":" + std::to_string(i.num_waiting) +
         ",\"created_ms\":" + std::to_string(i.created_ms) + "}";
}

std::string messages_json(const std::vector<broker::BusMessagePtr>& messages, std::vector<Bytes>& attachments) {
  std::string out = "\"messages\":[";
  for (size_t i = 0; i < messages.size(); ++i) {
    if (i) out.push_back(',');
    append_message(out, *messages[i], attachments.size());
    attachments.push_back(data_of(messages[i]));
  }
  out.push_back(']');
  return out;
}

}  // namespace siomq::surfaces::bus
