#include "store/contents_builder.h"

#include <algorithm>
#include <tuple>

#include "store/seq_key.h"

namespace siomq::store {
namespace {

// Decodes a record of a seq-keyed family and checks the seq it holds against its key.
template <class Record>
std::optional<std::string> add_by_seq(std::vector<Record>& out, Result<Record> record, uint64_t held,
                                      std::string_view key) {
  if (!record) return record.error().message;
  auto seq = seq_of_key(key);
  if (!seq) return "not a key of the store";
  if (held != *seq) return "it holds seq " + std::to_string(held);
  out.push_back(std::move(*record));
  return std::nullopt;
}

// Decodes a record keyed by its names and checks that `key_of(record)` is its key.
template <class Record, class KeyOf>
std::optional<std::string> add_by_name(std::vector<Record>& out, Result<Record> record, std::string_view key,
                                       KeyOf key_of, std::string_view other) {
  if (!record) return record.error().message;
  if (key_of(*record) != key) return "it holds another " + std::string(other);
  out.push_back(std::move(*record));
  return std::nullopt;
}

template <class Record, class Less>
void sort_unless_sorted(std::vector<Record>& records, Less less) {
  if (!std::is_sorted(records.begin(), records.end(), less)) std::sort(records.begin(), records.end(), less);
}

}  // namespace

std::optional<std::string> ContentsBuilder::add(Family family, std::string_view key, std::string_view value) {
  Contents& c = contents_;
  switch (family) {
    case Family::row: {
      auto row = decode_row(value);
      const uint64_t held = row ? row->seq : 0;
      return add_by_seq(c.rows, std::move(row), held, key);
    }
    case Family::dead_row: {
      auto dead = decode_dead_row(value);
      const uint64_t held = dead ? dead->row.seq : 0;
      return add_by_seq(c.dead, std::move(dead), held, key);
    }
    case Family::subscription:
      return add_by_name(c.subscriptions, decode_subscription(value), key,
                         [](const SubscriptionRecord& s) { return subscription_id(s.realm, s.key, s.consumer); },
                         "subscription");
    case Family::stream_message:
      return add_by_name(c.stream_messages, decode_stream_message(value), key,
                         [](const StreamMessage& m) { return stream_message_key(m.stream, m.seq); }, "message");
    case Family::consumer_state:
      return add_by_name(c.consumers, decode_consumer_state(value), key,
                         [](const ConsumerState& s) { return consumer_state_key(s.stream, s.consumer); },
                         "consumer");
    case Family::directory_entry:
      return add_by_name(c.directory, decode_directory_entry(value), key,
                         [](const DirectoryEntry& e) { return directory_key(e.directory, e.realm, e.key); },
                         "entry");
  }
  return "not a key of the store";
}

// Key order, compared field by field: a name holding a NUL byte would otherwise sort by its bytes.
Contents ContentsBuilder::finish() && {
  Contents& c = contents_;
  sort_unless_sorted(c.rows, [](const Row& a, const Row& b) { return a.seq < b.seq; });
  sort_unless_sorted(c.dead, [](const DeadRow& a, const DeadRow& b) { return a.row.seq < b.row.seq; });
  sort_unless_sorted(c.subscriptions, [](const SubscriptionRecord& a, const SubscriptionRecord& b) {
    return std::tie(a.realm, a.key, a.consumer) < std::tie(b.realm, b.key, b.consumer);
  });
  sort_unless_sorted(c.stream_messages, [](const StreamMessage& a, const StreamMessage& b) {
    return std::tie(a.stream, a.seq) < std::tie(b.stream, b.seq);
  });
  sort_unless_sorted(c.consumers, [](const ConsumerState& a, const ConsumerState& b) {
    return std::tie(a.stream, a.consumer) < std::tie(b.stream, b.consumer);
  });
  sort_unless_sorted(c.directory, [](const DirectoryEntry& a, const DirectoryEntry& b) {
    return std::tie(a.directory, a.realm, a.key) < std::tie(b.directory, b.realm, b.key);
  });
  return std::move(contents_);
}

}  // namespace siomq::store
