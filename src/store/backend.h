// The durable store's backends. The engine keeps the live state in memory; a backend is the durable
// copy it is rebuilt from at start-up. Three backends behind one interface: memory (nothing is kept),
// file (RocksDB under the data directory, the default) and redis. Each holds every record family
// (family.h) apart, under its own key prefix or hash. A backend is used from one thread only (the store
// writer's, writer.h); it never calls back into the engine, and keeps no reference to what it is given.
#pragma once

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "store/consumer_state.h"
#include "store/directory.h"
#include "store/op.h"
#include "store/rows.h"
#include "store/stream_log.h"
#include "wire/result.h"

namespace siomq::store {

// Everything a backend holds, decoded, for the engine to rebuild from: each family in its key order.
struct Contents {
  std::vector<Row> rows;                          // by seq
  std::vector<DeadRow> dead;                      // by seq
  std::vector<SubscriptionRecord> subscriptions;  // by (realm, key, consumer)
  std::vector<StreamMessage> stream_messages;     // by (stream, seq)
  std::vector<ConsumerState> consumers;           // by (stream, consumer)
  std::vector<DirectoryEntry> directory;          // by (directory, realm, key)
  uint64_t quarantined = 0;                       // records moved to the quarantine by this load

  // No record of any family (the quarantine aside).
  bool empty() const {
    return rows.empty() && dead.empty() && subscriptions.empty() && stream_messages.empty() && consumers.empty() &&
           directory.empty();
  }
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
  using Contents = store::Contents;

  virtual ~Backend() = default;
  virtual const char* name() const = 0;

  // Everything stored. A record that cannot be read back (damaged, written by a broken version, or
  // under a key that is not its own) never stops the start-up: it is moved to the quarantine — kept,
  // byte for byte, where load() does not look (family.h) — logged and counted. Throws StoreError only
  // when the store itself cannot be read.
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
