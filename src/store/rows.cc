// The JSON encodings of the tyo-mq families (rows.h): the payload and a subscription's spec are spliced
// raw, attachments are base64 (record_json.h says how every record is written and read).
#include "store/rows.h"

#include <string_view>

#include "store/record_json.h"
#include "store/seq_key.h"

namespace siomq::store {
namespace {

using namespace record_json;

// The members of a row object, without the braces (a dead row adds its own after them). Each member's
// comma, key and colon are one literal (one append, not four calls): a row is encoded for every copy
// stored. The bytes are those of append_key, member by member.
void append_row_members(std::string& out, const Row& row) {
  using namespace std::string_view_literals;
  out.append("\"seq\":"sv);
  append_integer(out, row.seq);
  out.append(",\"id\":"sv);
  append_string(out, row.id);
  out.append(",\"realm\":"sv);
  append_string(out, row.realm);
  out.append(",\"event\":"sv);
  append_string(out, row.event);
  out.append(",\"consumer\":"sv);
  append_string(out, row.consumer);
  out.append(",\"producer\":"sv);
  append_string(out, row.producer);
  out.append(",\"payload\":"sv);
  out.append(row.payload);
  out.append(",\"attachments\":"sv);
  append_base64_array(out, row.attachments);
  out.append(",\"created_at\":"sv);
  append_time(out, row.created_ms);
  out.append(",\"expires_at\":"sv);
  if (row.expires_ms == 0) out.append("null"sv);
  else append_time(out, row.expires_ms);
}

constexpr std::array<std::string_view, 10> kRowFields = {
    "seq", "id", "realm", "event", "consumer", "producer", "payload", "attachments", "created_at", "expires_at"};
constexpr std::array<std::string_view, 12> kDeadRowFields = {
    "seq", "id", "realm", "event", "consumer", "producer", "payload", "attachments", "created_at", "expires_at",
    "reason", "dead_lettered_at"};
constexpr std::array<std::string_view, 4> kSubscriptionFields = {"realm", "key", "consumer", "spec"};
static_assert(kDeadRowFields.size() <= kMaxFields && kRowFields.size() <= kMaxFields);

Row read_row(Fields& f) {
  Row row;
  row.seq = f.integer("seq");
  row.id = f.string("id");
  row.realm = f.string("realm");
  row.event = f.string("event");
  row.consumer = f.string("consumer");
  row.producer = f.string("producer");
  row.payload = f.object("payload");
  row.attachments = f.base64_strings("attachments");
  row.created_ms = f.time("created_at");
  row.expires_ms = f.optional_time("expires_at");
  return row;
}

}  // namespace

std::string encode_row(const Row& row) {
  std::string out;
  out.reserve(160 + row.payload.size() + row.id.size() + row.realm.size() + row.event.size() +
              row.consumer.size() + row.producer.size());
  out.push_back('{');
  append_row_members(out, row);
  out.push_back('}');
  return out;
}

Result<Row> decode_row(std::string_view text) {
  Fields f("row", text, kRowFields);
  Row row = read_row(f);
  if (f.error()) return *f.error();
  return row;
}

std::string encode_dead_row(const DeadRow& dead) {
  std::string out;
  out.reserve(200 + dead.row.payload.size() + dead.reason.size());
  out.push_back('{');
  append_row_members(out, dead.row);
  out.push_back(',');
  append_key(out, "reason");
  append_string(out, dead.reason);
  out.push_back(',');
  append_key(out, "dead_lettered_at");
  append_time(out, dead.dead_lettered_ms);
  out.push_back('}');
  return out;
}

Result<DeadRow> decode_dead_row(std::string_view text) {
  Fields f("dead row", text, kDeadRowFields);
  DeadRow dead;
  dead.row = read_row(f);
  dead.reason = f.string("reason");
  dead.dead_lettered_ms = f.time("dead_lettered_at");
  if (f.error()) return *f.error();
  return dead;
}

std::string encode_subscription(const SubscriptionRecord& sub) {
  std::string out;
  out.reserve(64 + sub.realm.size() + sub.key.size() + sub.consumer.size() + sub.spec.size());
  out.push_back('{');
  append_key(out, "realm");
  append_string(out, sub.realm);
  out.push_back(',');
  append_key(out, "key");
  append_string(out, sub.key);
  out.push_back(',');
  append_key(out, "consumer");
  append_string(out, sub.consumer);
  out.push_back(',');
  append_key(out, "spec");
  out.append(sub.spec);
  out.push_back('}');
  return out;
}

Result<SubscriptionRecord> decode_subscription(std::string_view text) {
  Fields f("subscription", text, kSubscriptionFields);
  SubscriptionRecord sub;
  sub.realm = f.string("realm");
  sub.key = f.string("key");
  sub.consumer = f.string("consumer");
  sub.spec = f.object("spec");
  if (f.error()) return *f.error();
  return sub;
}

std::string subscription_id(std::string_view realm, std::string_view key, std::string_view consumer) {
  std::string id;
  id.reserve(realm.size() + key.size() + consumer.size() + 2);
  append_subscription_id(id, realm, key, consumer);
  return id;
}

void append_subscription_id(std::string& out, std::string_view realm, std::string_view key, std::string_view consumer) {
  out.append(realm);
  out.push_back('\0');
  out.append(key);
  out.push_back('\0');
  out.append(consumer);
}

Op put(const Row& row) { return Op{Family::row, Op::Kind::put, seq_key(row.seq), encode_row(row)}; }
Op erase_row(uint64_t seq) { return Op{Family::row, Op::Kind::erase, seq_key(seq), {}}; }
Op put(const DeadRow& dead) {
  return Op{Family::dead_row, Op::Kind::put, seq_key(dead.row.seq), encode_dead_row(dead)};
}
Op erase_dead(uint64_t seq) { return Op{Family::dead_row, Op::Kind::erase, seq_key(seq), {}}; }
Op put(const SubscriptionRecord& sub) {
  return Op{Family::subscription, Op::Kind::put, subscription_id(sub.realm, sub.key, sub.consumer),
            encode_subscription(sub)};
}
Op erase_subscription(std::string id) { return Op{Family::subscription, Op::Kind::erase, std::move(id), {}}; }
Op quarantine(const SubscriptionRecord& sub) {
  return Op{Family::subscription, Op::Kind::quarantine, subscription_id(sub.realm, sub.key, sub.consumer),
            encode_subscription(sub)};
}

}  // namespace siomq::store
