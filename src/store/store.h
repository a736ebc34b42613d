// The durable store's records and its backends. The engine keeps the live state in memory; a backend
// is the durable copy it is rebuilt from at start-up. Three backends behind one interface: memory
// (nothing is kept), file (RocksDB under the data directory, the default) and redis. A backend is
// used from one thread only (the store writer's); it never calls back into the engine.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "wire/result.h"

namespace siomq::store {

// Immutable text shared by every holder: a message stored for 100 consumer queues is kept once in
// memory, not 100 times (issue 12: one 1 MiB PRODUCE to 100 ACK subscriptions took 353 MB). Copying one
// copies a pointer; it reads as a const std::string&.
class SharedText {
 public:
  SharedText() : p_(empty_text()) {}
  SharedText(std::string s) : p_(std::make_shared<const std::string>(std::move(s))) {}
  SharedText(const char* s) : SharedText(std::string(s)) {}
  operator const std::string&() const { return *p_; }
  const std::string& str() const { return *p_; }
  size_t size() const { return p_->size(); }
  bool empty() const { return p_->empty(); }
  friend bool operator==(const SharedText& a, const SharedText& b) { return *a.p_ == *b.p_; }
  friend bool operator==(const SharedText& a, const std::string& b) { return *a.p_ == b; }
  friend bool operator==(const SharedText& a, const char* b) { return *a.p_ == b; }

 private:
  static const std::shared_ptr<const std::string>& empty_text() {
    static const auto empty = std::make_shared<const std::string>();
    return empty;
  }
  std::shared_ptr<const std::string> p_;
};

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

// One change to the store. Rows and dead rows are addressed by seq, subscriptions by subscription_id;
// `value` is the record's encoding for a put, empty for a delete.
// `quarantine_subscription` moves a subscription record the engine cannot use aside: `value` (its
// encoding) is kept in the quarantine and the subscription is deleted.
struct Op {
  enum class Kind : uint8_t {
    put_row, delete_row, put_dead, delete_dead, put_subscription, delete_subscription, quarantine_subscription
  };
  Kind kind;
  uint64_t seq = 0;
  std::string id;     // subscription_id for subscription ops
  std::string value;
};

// What a backend holds, for the operator (stats) and the disk-usage measurement.
struct BackendStats {
  uint64_t disk_bytes = 0;  // bytes on disk (file), used memory (redis), 0 (memory)
};

// A start-up failure of the store (corrupt or foreign data directory, unreachable redis): the server
// prints it and exits with kStoreExitCode.
struct StoreError : std::runtime_error {
  using std::runtime_error::runtime_error;
};
inline constexpr int kStoreExitCode = 3;

class Backend {
 public:
  virtual ~Backend() = default;
  virtual const char* name() const = 0;

  // Everything stored, for the engine to rebuild from: rows and dead rows in seq order, then the
  // subscriptions. A record that cannot be read back (damaged, or written by a broken version) never
  // stops the start-up: it is moved to the quarantine — kept, byte for byte, where load() does not look
  // (file: under the key prefix 'q'; redis: the hash <prefix>:quarantine) — logged and counted. Throws
  // StoreError only when the store itself cannot be read.
  struct Contents {
    std::vector<Row> rows;
    std::vector<DeadRow> dead;
    std::vector<SubscriptionRecord> subscriptions;
    uint64_t quarantined = 0;  // records moved to the quarantine by this load
  };
  virtual Contents load() = 0;

  // Applies `ops` in order, atomically where the backend can. With `sync`, the data is on stable
  // storage when this returns. An error leaves the store as it was and says why.
  virtual Status write(const std::vector<Op>& ops, bool sync) = 0;

  // Housekeeping while idle (reclaiming space of deleted rows); cheap when there is nothing to do.
  virtual void maintain() {}
  virtual BackendStats stats() { return {}; }
};

// memory: keeps nothing; load() is empty, write() succeeds.
std::unique_ptr<Backend> open_memory();
// file: RocksDB in `dir`. A missing directory is created (and logged); an empty one is initialised;
// one holding anything but a siomq store, or a store that cannot be opened, throws StoreError.
std::unique_ptr<Backend> open_file(const std::string& dir);
// redis: `url` redis://[:password@]host[:port][/db], keys under `prefix`. Throws StoreError when the
// server cannot be reached.
std::unique_ptr<Backend> open_redis(const std::string& url, const std::string& prefix);

}  // namespace siomq::store
