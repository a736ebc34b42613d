// The bus's structs as JSON and as text (tools/cli/bus_format.h).
#include "tools/cli/bus_format.h"

#include "tools/cli/output.h"

namespace siomq::cli {

using nlohmann::json;

namespace {

json header_json(const bus::Header& h) {
  json o = json::object();
  for (const auto& [k, v] : h) o[k] = v;
  return o;
}

std::string seq_pair(const bus::SequencePair& p) {
  return "consumer " + std::to_string(p.consumer_seq) + ", stream " + std::to_string(p.stream_seq);
}

}  // namespace

json to_json(const bus::Message& m) {
  json o{{"subject", m.subject}};
  put_data(o, m.data);
  if (!m.header.empty()) o["header"] = header_json(m.header);
  if (!m.reply.empty()) o["reply"] = m.reply;
  if (!m.stream.empty()) o["stream"] = m.stream;
  if (!m.consumer.empty()) o["consumer"] = m.consumer;
  if (m.seq) o["seq"] = m.seq;
  if (m.delivered) o["delivered"] = m.delivered;
  if (m.timestamp_ms) o["timestamp_ms"] = m.timestamp_ms;
  return o;
}

json to_json(const bus::StreamConfig& c) {
  return json{{"name", c.name},
              {"subjects", c.subjects},
              {"storage", c.storage},
              {"retention", c.retention},
              {"max_msgs", c.max_msgs},
              {"max_bytes", c.max_bytes},
              {"max_age_ms", c.max_age_ms},
              {"max_msg_size", c.max_msg_size},
              {"max_msgs_per_subject", c.max_msgs_per_subject},
              {"discard", c.discard},
              {"dedup_window_ms", c.dedup_window_ms},
              {"dead_letter_stream", c.dead_letter_stream}};
}

json to_json(const bus::StreamMeta& m) {
  json o = to_json(static_cast<const bus::StreamConfig&>(m));
  o["created_ms"] = m.created_ms;
  return o;
}

json to_json(const bus::StreamState& s) {
  return json{{"messages", s.messages},       {"bytes", s.bytes},           {"first_seq", s.first_seq},
              {"last_seq", s.last_seq},       {"first_ts_ms", s.first_ts_ms}, {"last_ts_ms", s.last_ts_ms},
              {"consumer_count", s.consumer_count}};
}

json to_json(const bus::StreamInfo& i) {
  json consumers = json::array();
  for (const auto& c : i.consumers) consumers.push_back(to_json(c));
  return json{{"config", to_json(i.stream)}, {"state", to_json(i.state)}, {"consumers", consumers}};
}

json to_json(const bus::ConsumerConfig& c) {
  json o{{"stream", c.stream},
         {"name", c.name},
         {"deliver_policy", c.deliver_policy},
         {"ack_policy", c.ack_policy},
         {"ack_wait_ms", c.ack_wait_ms},
         {"max_deliver", c.max_deliver},
         {"backoff_ms", c.backoff_ms},
         {"filter_subject", c.filter_subject},
         {"max_ack_pending", c.max_ack_pending}};
  if (c.opt_start_seq) o["opt_start_seq"] = c.opt_start_seq;
  if (c.opt_start_time_ms) o["opt_start_time_ms"] = c.opt_start_time_ms;
  if (!c.deliver_subject.empty()) o["deliver_subject"] = c.deliver_subject;
  if (!c.deliver_group.empty()) o["deliver_group"] = c.deliver_group;
  return o;
}

json to_json(const bus::ConsumerInfo& i) {
  auto pair = [](const bus::SequencePair& p) { return json{{"consumer_seq", p.consumer_seq}, {"stream_seq", p.stream_seq}}; };
  return json{{"stream", i.stream},
              {"name", i.name},
              {"config", to_json(i.config)},
              {"delivered", pair(i.delivered)},
              {"ack_floor", pair(i.ack_floor)},
              {"num_pending", i.num_pending},
              {"num_ack_pending", i.num_ack_pending},
              {"num_redelivered", i.num_redelivered},
              {"num_waiting", i.num_waiting},
              {"created_ms", i.created_ms}};
}

json to_json(const bus::Stats& s) {
  return json{{"server_id", s.server_id},
              {"version", s.version},
              {"uptime_ms", s.uptime_ms},
              {"connections", s.connections},
              {"total_connections", s.total_connections},
              {"subscriptions", s.subscriptions},
              {"in_msgs", s.in_msgs},
              {"out_msgs", s.out_msgs},
              {"in_bytes", s.in_bytes},
              {"out_bytes", s.out_bytes},
              {"slow_consumers", s.slow_consumers},
              {"streams", s.streams},
              {"consumers", s.consumers},
              {"stream_msgs", s.stream_msgs},
              {"stream_bytes", s.stream_bytes},
              {"rss_bytes", s.rss_bytes}};
}

void print_message(const Output& out, const bus::Message& m, int n) {
  std::string head = "[#" + std::to_string(n) + "] Received on \"" + m.subject + "\"";
  if (!m.stream.empty()) head += " stream " + m.stream + " seq " + std::to_string(m.seq);
  if (m.delivered > 1) head += " delivered " + std::to_string(m.delivered) + " times";
  if (!m.reply.empty()) head += " reply " + m.reply;
  out.line(head);
  for (const auto& [k, v] : m.header) out.line(k + ": " + v);
  out.line(m.data);
  out.line("");
}

void print_stream(const Output& out, const bus::StreamInfo& info) {
  const auto& c = info.stream;
  const auto& s = info.state;
  Fields f;
  f.add("Stream", c.name)
      .add("Subjects", join(c.subjects, ", "))
      .add("Storage", c.storage)
      .add("Retention", c.retention)
      .add("Discard", c.discard)
      .add("Max messages", limit(c.max_msgs))
      .add("Max bytes", human_bytes(c.max_bytes))
      .add("Max age", c.max_age_ms > 0 ? std::to_string(c.max_age_ms) + " ms" : "unlimited")
      .add("Max message size", human_bytes(c.max_msg_size))
      .add("Max per subject", limit(c.max_msgs_per_subject))
      .add("Dedup window", std::to_string(c.dedup_window_ms) + " ms")
      .add("Dead letters", c.dead_letter_stream.empty() ? "-" : c.dead_letter_stream)
      .add("Created", iso_time(c.created_ms))
      .add("Messages", std::to_string(s.messages))
      .add("Bytes", human_bytes(static_cast<int64_t>(s.bytes)))
      .add("First seq", std::to_string(s.first_seq) + (s.first_ts_ms ? " @ " + iso_time(s.first_ts_ms) : ""))
      .add("Last seq", std::to_string(s.last_seq) + (s.last_ts_ms ? " @ " + iso_time(s.last_ts_ms) : ""))
      .add("Consumers", std::to_string(s.consumer_count));
  f.print(out);
}

void print_consumer(const Output& out, const bus::ConsumerInfo& i) {
  const auto& c = i.config;
  std::vector<std::string> backoff;
  for (auto b : c.backoff_ms) backoff.push_back(std::to_string(b));
  Fields f;
  f.add("Consumer", i.name)
      .add("Stream", i.stream)
      .add("Filter", c.filter_subject.empty() ? "-" : c.filter_subject)
      .add("Deliver policy", c.deliver_policy)
      .add("Ack policy", c.ack_policy)
      .add("Ack wait", std::to_string(c.ack_wait_ms) + " ms")
      .add("Max deliver", limit(c.max_deliver))
      .add("Backoff", backoff.empty() ? "-" : join(backoff, ", ") + " ms")
      .add("Max ack pending", limit(c.max_ack_pending))
      .add("Mode", c.deliver_subject.empty() ? "pull" : "push to " + c.deliver_subject +
                                                          (c.deliver_group.empty() ? "" : " (group " + c.deliver_group + ")"))
      .add("Created", iso_time(i.created_ms))
      .add("Delivered", seq_pair(i.delivered))
      .add("Ack floor", seq_pair(i.ack_floor))
      .add("Pending", std::to_string(i.num_pending))
      .add("Ack pending", std::to_string(i.num_ack_pending))
      .add("Redelivered", std::to_string(i.num_redelivered))
      .add("Waiting pulls", std::to_string(i.num_waiting));
  f.print(out);
}

}  // namespace siomq::cli
