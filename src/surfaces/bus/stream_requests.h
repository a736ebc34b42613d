// The stream and consumer requests (bus.md §4 stream.pub and consumer.*, §5 the control plane), read and
// validated in full before anything is looked up (§8.19). Pure: the fuzz target drives these directly.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "broker/stream_config.h"
#include "broker/streams.h"
#include "wire/result.h"

namespace siomq::surfaces::bus {

inline constexpr size_t kMaxPullBatch = 1000;
inline constexpr int64_t kMaxPullWaitMs = 60000;

Result<broker::PublishRequest> parse_stream_pub(std::string_view args, std::span<const std::string> attachments);
Result<broker::PullRequest> parse_pull(std::string_view args);
// consumer.ack / nak / term / progress: {consumer, seq, delay_ms? (nak), reason? (term)}.
struct AckRequest {
  std::string consumer;
  uint64_t seq = 0;
  int64_t delay_ms = 0;
  std::string reason;
};
Result<AckRequest> parse_ack(std::string_view args);

Result<broker::StreamConfig> parse_stream_create(std::string_view args);
// {name}: stream.delete, stream.info.
Result<std::string> parse_stream_name(std::string_view args);
struct PurgeRequest {
  std::string name, subject;
  uint64_t keep = 0;
};
Result<PurgeRequest> parse_purge(std::string_view args);
struct GetRequest {
  std::string name;
  uint64_t seq = 0;
  std::string last_by_subject;
};
Result<GetRequest> parse_get(std::string_view args);
Result<broker::ConsumerConfig> parse_consumer_add(std::string_view args);
// {stream, name}: consumer.delete, consumer.info.
struct ConsumerRef {
  std::string stream, name;
};
Result<ConsumerRef> parse_consumer_ref(std::string_view args);

}  // namespace siomq::surfaces::bus
