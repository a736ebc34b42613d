// libFuzzer target for the store's record codecs: every family's (src/store/rows.cc, stream_log.cc,
// consumer_state.cc, directory.cc, over record_json.cc).
//
// The whole input is given to every decoder. A record that one of them accepts must encode to text that
// decodes to the same record, and re-encoding that must give the same text (encode∘decode is a fixed
// point). The input bytes are also stored as every string field, as the bytes payload and as an
// attachment of a record, which must come back byte for byte.
#include <cstdint>
#include <string>
#include <string_view>

#include "store/backend.h"

namespace {

using namespace siomq::store;

void check(bool ok) {
  if (!ok) __builtin_trap();
}

bool same(const Row& a, const Row& b) {
  return a.seq == b.seq && a.id == b.id && a.realm == b.realm && a.event == b.event && a.consumer == b.consumer &&
         a.producer == b.producer && a.payload == b.payload && a.attachments == b.attachments &&
         a.created_ms == b.created_ms && a.expires_ms == b.expires_ms;
}

bool same(const DeadRow& a, const DeadRow& b) {
  return same(a.row, b.row) && a.reason == b.reason && a.dead_lettered_ms == b.dead_lettered_ms;
}

bool same(const SubscriptionRecord& a, const SubscriptionRecord& b) {
  return a.realm == b.realm && a.key == b.key && a.consumer == b.consumer && a.spec == b.spec;
}

bool same(const StreamMessage& a, const StreamMessage& b) {
  return a.stream == b.stream && a.seq == b.seq && a.subject == b.subject && a.headers == b.headers &&
         a.payload_format == b.payload_format && a.payload == b.payload && a.attachments == b.attachments &&
         a.time_ms == b.time_ms && a.msg_id == b.msg_id;
}

bool same(const ConsumerState& a, const ConsumerState& b) {
  return a.stream == b.stream && a.consumer == b.consumer && a.delivered == b.delivered &&
         a.ack_floor == b.ack_floor && a.pending == b.pending && a.config == b.config;
}

bool same(const DirectoryEntry& a, const DirectoryEntry& b) {
  return a.directory == b.directory && a.realm == b.realm && a.key == b.key && a.value == b.value &&
         a.updated_ms == b.updated_ms;
}

// decode(encode(record)) is the record, and encode of that is the same text.
template <class Record, class Encode, class Decode>
void check_fixed_point(const Record& record, Encode encode, Decode decode) {
  std::string text = encode(record);
  auto again = decode(text);
  check(again.ok());
  check(same(*again, record));
  check(encode(*again) == text);
}

void check_decoders(std::string_view input) {
  if (auto row = decode_row(input); row.ok()) check_fixed_point(*row, encode_row, decode_row);
  if (auto dead = decode_dead_row(input); dead.ok()) check_fixed_point(*dead, encode_dead_row, decode_dead_row);
  if (auto sub = decode_subscription(input); sub.ok())
    check_fixed_point(*sub, encode_subscription, decode_subscription);
  if (auto m = decode_stream_message(input); m.ok())
    check_fixed_point(*m, encode_stream_message, decode_stream_message);
  if (auto state = decode_consumer_state(input); state.ok())
    check_fixed_point(*state, encode_consumer_state, decode_consumer_state);
  if (auto entry = decode_directory_entry(input); entry.ok())
    check_fixed_point(*entry, encode_directory_entry, decode_directory_entry);
}

void check_any_bytes(std::string_view input) {
  const std::string bytes(input);
  DeadRow dead;
  dead.row.seq = bytes.size();
  dead.row.id = dead.row.realm = dead.row.event = dead.row.consumer = dead.row.producer = bytes;
  dead.row.payload = "{}";
  dead.row.attachments = {bytes, ""};
  dead.reason = bytes;
  check_fixed_point(dead.row, encode_row, decode_row);
  check_fixed_point(dead, encode_dead_row, decode_dead_row);
  check_fixed_point(SubscriptionRecord{bytes, bytes, bytes, "{}"}, encode_subscription, decode_subscription);
  check(subscription_id(bytes, "", "").size() == bytes.size() + 2);

  StreamMessage m{bytes, bytes.size(), bytes, std::nullopt, StreamMessage::Payload::bytes, bytes, {bytes}, 0, bytes};
  check_fixed_point(m, encode_stream_message, decode_stream_message);
  check(stream_message_key(bytes, 1).size() == bytes.size() + 9);
  check_fixed_point(ConsumerState{bytes, bytes, 2, 1, {{2, 1, 0}}, "{}"}, encode_consumer_state, decode_consumer_state);
  check_fixed_point(DirectoryEntry{bytes, bytes, bytes, "null", 0}, encode_directory_entry, decode_directory_entry);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  check_decoders(input);
  check_any_bytes(input);
  return 0;
}
