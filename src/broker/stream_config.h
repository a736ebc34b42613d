// The configuration of a bus stream and of its consumers (bus.md §5 CreateStreamReq, AddConsumerReq),
// read from a request object or from the store (the same JSON), validated in full, with the defaults
// filled in: two configs are the same stream (or consumer) exactly when they compare equal (§8.5, §8.10).
// "Unlimited" is -1 whatever the request said (0 or -1). Pure, any thread.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "wire/result.h"

namespace siomq::broker {

enum class StreamStorage : uint8_t { file, memory };
enum class Retention : uint8_t { limits, interest, workqueue };
enum class Discard : uint8_t { old_messages, new_messages };

struct StreamConfig {
  std::string name;
  std::vector<std::string> subjects;  // patterns; none given: the stream's name
  StreamStorage storage = StreamStorage::file;
  Retention retention = Retention::limits;
  int64_t max_msgs = -1, max_bytes = -1, max_age_ms = -1, max_msg_size = -1, max_msgs_per_subject = -1;
  Discard discard = Discard::old_messages;
  int64_t dedup_window_ms = 120000;
  std::string dead_letter_stream;  // empty: none
  bool operator==(const StreamConfig&) const = default;
};

enum class DeliverPolicy : uint8_t { all, last, new_messages, by_start_seq, by_start_time };
enum class AckPolicy : uint8_t { explicit_ack, none, all };

struct ConsumerConfig {
  std::string stream, name;
  DeliverPolicy deliver_policy = DeliverPolicy::all;
  uint64_t opt_start_seq = 0;
  int64_t opt_start_time_ms = 0;
  AckPolicy ack_policy = AckPolicy::explicit_ack;
  int64_t ack_wait_ms = 30000;
  int64_t max_deliver = -1;
  std::vector<int64_t> backoff_ms;
  std::string filter_subject;  // empty: every subject of the stream
  int64_t max_ack_pending = 1000;
  std::string deliver_subject;  // push mode when set
  std::string deliver_group;
  bool push() const { return !deliver_subject.empty(); }
  bool operator==(const ConsumerConfig&) const = default;
};

// Bounds on what one config may ask for.
inline constexpr size_t kMaxStreamSubjects = 256;
inline constexpr size_t kMaxBackoffSteps = 64;
// Unacked deliveries per consumer at most, also what -1 (no limit) gets: a consumer's record, rewritten
// whole on each change that must be durable, lists every one of them.
inline constexpr int64_t kMaxAckPendingLimit = 10000;

// 1–64 characters of A-Za-z0-9_- (§5).
bool valid_stream_name(std::string_view name);
// 1–64 characters without '.', '*', '>' or whitespace (§8.10).
bool valid_consumer_name(std::string_view name);

// From a CreateStreamReq / AddConsumerReq object (or a stored config): 400 naming the first bad field.
Result<StreamConfig> parse_stream_config(std::string_view object);
Result<ConsumerConfig> parse_consumer_config(std::string_view object);

// The JSON objects of StreamMeta (without created_ms) and of ConsumerInfo's `config`.
std::string to_json(const StreamConfig& config);
std::string to_json(const ConsumerConfig& config);

}  // namespace siomq::broker
