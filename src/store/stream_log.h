// The stream log family: the messages of the bus's persistent streams, one record per (stream, seq).
//
// `seq` is the stream's own sequence: each stream counts from 1 on its own, independently of other
// streams and of the durable queues' process-wide row seq (rows.h). Which node assigns it in a cluster
// is the ownership decision in docs/design.md; the store only keeps what it is given.
//
// Key: the stream name, a NUL byte, then the seq as 8 bytes big-endian (seq_key.h), so the file store
// iterates a stream in seq order; the redis field is the same bytes. load() returns the messages in
// (stream, seq) order. The store keeps no index: the bus rebuilds its subject, time and header indexes
// in memory from these records at load, so only the messages themselves are written per publish.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "store/op.h"
#include "store/shared_text.h"
#include "wire/result.h"

namespace siomq::store {

struct StreamMessage {
  enum class Payload : uint8_t {
    json,   // `payload` is JSON text (any value)
    bytes,  // `payload` is raw bytes
  };
  std::string stream;
  uint64_t seq = 0;  // within `stream`, at most 2^53
  std::string subject;
  std::optional<std::string> headers;  // a JSON object as text, or none
  Payload payload_format = Payload::json;
  SharedText payload;
  std::vector<std::string> attachments;  // binary attachments, in placeholder order
  int64_t time_ms = 0;                   // when the stream stored it, Unix ms
  std::optional<std::string> msg_id;     // the publisher's message id, for duplicate detection
};

// One JSON object: {"stream","seq","subject","headers" (object or null),"payload_format" ("json" or
// "bytes"),"payload" (the JSON spliced raw, or base64),"attachments" (base64),"time","msg_id" (or null)}.
std::string encode_stream_message(const StreamMessage& message);
Result<StreamMessage> decode_stream_message(std::string_view text);

std::string stream_message_key(std::string_view stream, uint64_t seq);

Op put(const StreamMessage& message);
// The same as put() of a message with bytes as its payload and no attachments, from views: no copy of
// the message is made on the way (the bus's stream.pub path). `headers`, `msg_id`: null for none.
Op put_stream_message(std::string_view stream, uint64_t seq, std::string_view subject, const std::string* headers,
                      std::string_view bytes, int64_t time_ms, const std::string* msg_id);
Op erase_stream_message(std::string_view stream, uint64_t seq);

}  // namespace siomq::store
