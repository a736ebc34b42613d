// The record families of the store. A family is one kind of record with its own codec (its header) and
// its own place in every backend: file keys start with the family's prefix byte, redis keeps it in the
// hash <prefix>:<redis_hash>. A record is addressed within its family by a byte key that its header
// defines; load() returns each family in key order. The table is constant: a family's prefix byte and
// hash name are on disk and in redis, so they never change once released.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace siomq::store {

enum class Family : uint8_t {
  row,              // a queued copy of a tyo-mq message (rows.h)
  dead_row,         // a dead-lettered row (rows.h)
  subscription,     // a durable tyo-mq subscription (rows.h)
  stream_message,   // a message of a persistent bus stream (stream_log.h)
  consumer_state,   // a bus consumer's cursor, ack floor and pending set (consumer_state.h)
  directory_entry,  // a value of a directory: E2EE public keys, auth data (directory.h)
};

struct FamilyInfo {
  Family family;
  std::string_view name;        // as log lines name a record: "row", "stream message"
  char file_prefix;             // the first byte of the family's file keys
  std::string_view redis_hash;  // the family's hash is <prefix>:<redis_hash>
  // Keyed by the process-wide row seq (next_seq in broker/durable_queues.cc): the key is its 8 bytes
  // big-endian (seq_key.h) and the redis field its decimal text, as written before families existed.
  bool keyed_by_row_seq;
};

inline constexpr std::array<FamilyInfo, 6> kFamilies = {{
    {Family::row, "row", 'r', "rows", true},
    {Family::dead_row, "dead row", 'd', "dead", true},
    {Family::subscription, "subscription", 's', "subs", false},
    {Family::stream_message, "stream message", 'l', "stream", false},
    {Family::consumer_state, "consumer state", 'c', "consumers", false},
    {Family::directory_entry, "directory entry", 'e', "directory", false},
}};

constexpr const FamilyInfo& info(Family family) { return kFamilies[static_cast<size_t>(family)]; }

// Records a load() could not read, moved aside byte for byte: file keys 'q' + the record's own file key,
// redis fields "<redis_hash>:<field>" of the hash <prefix>:quarantine. load() never reads them.
inline constexpr char kQuarantineFilePrefix = 'q';
inline constexpr std::string_view kQuarantineRedisHash = "quarantine";

// The family whose file keys start with `prefix`; nullopt for the quarantine and any other byte.
constexpr std::optional<Family> family_of_file_prefix(char prefix) {
  for (const FamilyInfo& f : kFamilies) {
    if (f.file_prefix == prefix) return f.family;
  }
  return std::nullopt;
}

}  // namespace siomq::store
