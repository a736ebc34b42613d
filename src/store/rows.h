// The tyo-mq families: queued rows, dead rows and durable subscriptions, their JSON encodings and the
// ops that store them. These are the records the store held before it had families; their keys and
// encodings are unchanged on disk and in redis.
//
// Keys: a row and a dead row by their seq (seq_key.h: 8 bytes big-endian; redis fields are the decimal
// seq), a subscription by subscription_id. The seq is the process-wide row seq of the durable queues,
// not a per-stream number (see stream_log.h for the bus's).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "store/op.h"
#include "store/shared_text.h"
#include "wire/result.h"

namespace siomq::store {

// A stored message: one copy for one consumer queue (realm, event key, consumer id). `seq` orders
// every row of the store; within a queue it is the delivery order.
struct Row {
  uint64_t seq = 0;
  std::string id;        // msgId, "msg-<base36 ms>-<12 hex>"
  std::string realm;
  std::string event;     // the subscription key the copy was routed under
  std::string consumer;  // the durable queue key (consumer_id, else the name)
  std::string producer;
  SharedText payload;    // the delivery object {event, message, from, ...} as JSON text, shared by its copies
  std::vector<std::string> attachments;  // binary attachments of the message, in placeholder order
  int64_t created_ms = 0;   // Unix ms
  int64_t expires_ms = 0;   // Unix ms; 0 = never
};

// A dead-lettered row (§5.6).
struct DeadRow {
  Row row;
  std::string reason;
  int64_t dead_lettered_ms = 0;
};

// A durable subscription as stored: which queue, and the subscription's own settings as JSON text
// (the engine's format; the store does not look inside).
struct SubscriptionRecord {
  std::string realm;
  std::string key;       // subscription key
  std::string consumer;  // consumer name
  std::string spec;      // JSON object
};

// JSON encodings of the records (one object each; payload spliced raw, attachments base64).
std::string encode_row(const Row& row);
Result<Row> decode_row(std::string_view text);
std::string encode_dead_row(const DeadRow& dead);
Result<DeadRow> decode_dead_row(std::string_view text);
std::string encode_subscription(const SubscriptionRecord& sub);
Result<SubscriptionRecord> decode_subscription(std::string_view text);
// The identity of a subscription record: realm, key and consumer joined with NUL bytes.
std::string subscription_id(std::string_view realm, std::string_view key, std::string_view consumer);
// The same, appended to `out` (a buffer kept for lookups).
void append_subscription_id(std::string& out, std::string_view realm, std::string_view key, std::string_view consumer);

// The ops of these families.
Op put(const Row& row);
Op erase_row(uint64_t seq);
Op put(const DeadRow& dead);
Op erase_dead(uint64_t seq);
Op put(const SubscriptionRecord& sub);
Op erase_subscription(std::string id);  // id: subscription_id
// Moves a subscription the engine cannot use to the quarantine (its encoding kept byte for byte).
Op quarantine(const SubscriptionRecord& sub);

}  // namespace siomq::store
