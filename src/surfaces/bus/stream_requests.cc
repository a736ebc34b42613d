#include "surfaces/bus/stream_requests.h"

#include "surfaces/bus/core_requests.h"
#include "surfaces/bus/fields.h"
#include "wire/bus_subject.h"

namespace siomq::surfaces::bus {
namespace {

constexpr int64_t kMaxSeq = int64_t{1} << 53;

Result<std::string> stream_name(Fields& f, std::string_view field = "name") {
  auto name = f.string(field, true, 256);
  if (f.error()) return *f.error();
  if (!broker::valid_stream_name(*name)) return bad(field, "must be 1-64 characters of A-Za-z0-9_-");
  return std::move(*name);
}

Result<std::string> consumer_name(Fields& f, std::string_view field) {
  auto name = f.string(field, true, 256);
  if (f.error()) return *f.error();
  if (!broker::valid_consumer_name(*name)) return bad(field, "must be 1-64 characters without '.', '*', '>' or whitespace");
  return std::move(*name);
}

}  // namespace

Result<broker::PublishRequest> parse_stream_pub(std::string_view args, std::span<const std::string> attachments) {
  auto object = request_object(args);
  if (!object) return object.error();
  Fields f(*object, {"subject", "data", "header", "msg_id", "stream", "expect_last_seq", "expect_last_subject_seq"});
  broker::PublishRequest r;
  auto subject = f.string("subject", true);
  auto msg_id = f.string("msg_id", false, kMaxMsgIdBytes);
  auto stream = f.string("stream", false, 256);
  auto last = f.integer("expect_last_seq", 0, kMaxSeq);
  auto last_subject = f.integer("expect_last_subject_seq", 0, kMaxSeq);
  if (f.error()) return *f.error();
  if (auto s = check_subject("subject", *subject); !s) return s.error();
  r.subject = std::move(*subject);
  auto data = read_data(f.raw("data").value_or(""), attachments);
  if (!data) return data.error();
  r.data = std::move(*data);
  std::optional<std::string> header_id;
  if (auto h = f.raw("header")) {
    auto header = read_header(*h, &header_id);
    if (!header) return header.error();
    r.header = std::move(*header);
  }
  if (msg_id && msg_id->empty()) return bad("msg_id", "must not be empty");
  // msg_id and Msg-Id share one id space (§8.9); the field wins when both are given.
  r.msg_id = msg_id ? std::move(*msg_id) : header_id.value_or("");
  if (r.msg_id.size() > kMaxMsgIdBytes) return bad("header", "Msg-Id is longer than 256 bytes");
  if (stream) {
    if (!broker::valid_stream_name(*stream)) return bad("stream", "must be 1-64 characters of A-Za-z0-9_-");
    r.stream = std::move(*stream);
  }
  if (last) r.expect_last_seq = static_cast<uint64_t>(*last);
  if (last_subject) r.expect_last_subject_seq = static_cast<uint64_t>(*last_subject);
  return r;
}

Result<broker::PullRequest> parse_pull(std::string_view args) {
  auto object = request_object(args);
  if (!object) return object.error();
  Fields f(*object, {"consumer", "batch", "wait_ms", "no_wait"});
  auto consumer = consumer_name(f, "consumer");
  if (!consumer) return consumer.error();
  auto batch = f.integer("batch", 1, kMaxPullBatch);
  auto wait = f.integer("wait_ms", 0, kMaxPullWaitMs);
  auto no_wait = f.boolean("no_wait");
  if (f.error()) return *f.error();
  return broker::PullRequest{std::move(*consumer), static_cast<size_t>(batch.value_or(1)), wait.value_or(0),
                             no_wait.value_or(false)};
}

Result<AckRequest> parse_ack(std::string_view args) {
  auto object = request_object(args);
  if (!object) return object.error();
  Fields f(*object, {"consumer", "seq", "delay_ms", "reason"});
  auto consumer = consumer_name(f, "consumer");
  if (!consumer) return consumer.error();
  if (!f.has("seq")) return bad("seq", "is required");
  auto seq = f.integer("seq", 1, kMaxSeq);
  auto delay = f.integer("delay_ms", 0, 86400 * 1000LL);
  auto reason = f.string("reason", false, 1024);
  if (f.error()) return *f.error();
  return AckRequest{std::move(*consumer), static_cast<uint64_t>(*seq), delay.value_or(0), reason.value_or("")};
}

Result<broker::StreamConfig> parse_stream_create(std::string_view args) {
  auto object = request_object(args);
  if (!object) return object.error();
  return broker::parse_stream_config(*object);
}

Result<std::string> parse_stream_name(std::string_view args) {
  auto object = request_object(args);
  if (!object) return object.error();
  Fields f(*object, {"name"});
  return stream_name(f);
}

Result<PurgeRequest> parse_purge(std::string_view args) {
  auto object = request_object(args);
  if (!object) return object.error();
  Fields f(*object, {"name", "subject", "keep"});
  auto name = stream_name(f);
  if (!name) return name.error();
  auto subject = f.string("subject", false, siomq::bus::kMaxSubjectBytes);
  auto keep = f.integer("keep", 0, kMaxSeq);
  if (f.error()) return *f.error();
  PurgeRequest r{std::move(*name), {}, static_cast<uint64_t>(keep.value_or(0))};
  if (subject && !subject->empty()) {
    if (const char* why = siomq::bus::pattern_error(*subject)) return bad("subject", why);
    r.subject = std::move(*subject);
  }
  return r;
}

Result<GetRequest> parse_get(std::string_view args) {
  auto object = request_object(args);
  if (!object) return object.error();
  Fields f(*object, {"name", "seq", "last_by_subject"});
  auto name = stream_name(f);
  if (!name) return name.error();
  auto seq = f.integer("seq", 1, kMaxSeq);
  auto last = f.string("last_by_subject", false, siomq::bus::kMaxSubjectBytes);
  if (f.error()) return *f.error();
  if (seq && last) return bad("seq", "give either seq or last_by_subject");
  if (!seq && !last) return bad("seq", "is required (or last_by_subject)");
  GetRequest r{std::move(*name), static_cast<uint64_t>(seq.value_or(0)), {}};
  if (last) {
    if (auto s = check_subject("last_by_subject", *last); !s) return s.error();
    r.last_by_subject = std::move(*last);
  }
  return r;
}

Result<broker::ConsumerConfig> parse_consumer_add(std::string_view args) {
  auto object = request_object(args);
  if (!object) return object.error();
  return broker::parse_consumer_config(*object);
}

Result<ConsumerRef> parse_consumer_ref(std::string_view args) {
  auto object = request_object(args);
  if (!object) return object.error();
  Fields f(*object, {"stream", "name"});
  auto stream = stream_name(f, "stream");
  if (!stream) return stream.error();
  auto name = consumer_name(f, "name");
  if (!name) return name.error();
  return ConsumerRef{std::move(*stream), std::move(*name)};
}

}  // namespace siomq::surfaces::bus
