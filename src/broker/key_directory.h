// The key directory: per realm, the public keys each identity published (KEY_PUBLISH / KEY_LOOKUP) and
// its Signal prekey bundle with a pool of one-time prekeys (PREKEY_PUBLISH / PREKEY_TAKE). Public key
// material only; the broker never sees a private key. Protocol-neutral: a surface decides who may
// publish for which identity, the directory keeps, bounds and stores.
//
// Durability: every change is written through the store writer (the directory family, store/directory.h:
// directory "e2ee" holds an identity's key set, "prekeys" its bundle, one record per identity) and its
// `done` runs once the write is on disk (or failed), on the writer thread: a surface answers then, never
// before. A take that consumes a one-time prekey is written before its `done`, so a restart cannot hand
// that prekey out again. Reads wait for the writes in flight (a write barrier), so nobody is shown an
// entry that a crash could still take back. A failed write of a publish is undone in memory unless a
// later change of the same record has followed (that change's write then carries the record whole).
//
// Bounds (KeyDirectoryLimits): 8 keys per identity (429 beyond, re-publishing a key_id replaces it),
// 100 one-time prekeys per identity (the oldest go first when a publish overfills the pool), entries
// (an identity's key set or its bundle) per realm, and bytes in all (507 beyond either).
//
// Threading: any thread; one mutex inside, held for bookkeeping and the writer's submit only. Callbacks
// run without it (unless the writer refuses a submit at once, when it is stopping). The writer must outlive the directory's last callback (stop the writer first).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "broker/directory_values.h"
#include "broker/key_directory_limits.h"
#include "store/directory.h"
#include "store/op.h"
#include "wire/result.h"

namespace siomq::store {
class Writer;
}

namespace siomq::broker {

// What PREKEY_TAKE hands out: the bundle without its pool, the one-time prekey it took (none when the
// pool was empty) and how many are left.
struct TakenBundle {
  PrekeyBundle bundle;
  std::optional<OneTimePrekey> one_time;
  size_t remaining = 0;
};

class KeyDirectory {
 public:
  using Done = std::function<void(const Status&)>;

  KeyDirectory(store::Writer& writer, KeyDirectoryLimits limits = {});
  KeyDirectory(const KeyDirectory&) = delete;
  KeyDirectory& operator=(const KeyDirectory&) = delete;

  // At start-up, the store's directory entries (entries of other directories are not this one's and are
  // left alone). Returns the ops that move aside (quarantine) the entries it cannot read.
  std::vector<store::Op> load(const std::vector<store::DirectoryEntry>& entries);

  // Every answer comes through the callback: at once (before the call returns) for a refusal or when
  // nothing waits for a write, else from the writer thread. Refusals: 400 (a realm name the store cannot
  // key: it holds a NUL byte), 429 (the identity's key cap), 507 (the directory is full); 500-class when
  // the write failed.

  // Publishes (or replaces, by key_id) one key of `identity`; its time is set here.
  void publish_key(const std::string& realm, const std::string& identity, PublicKey key, Done done);
  // Sets the whole key set of `identity` (1 to max_keys_per_identity keys, their times kept): a cluster's
  // node takes an identity's keys as the cluster's shared directory holds them.
  void replace_keys(const std::string& realm, const std::string& identity, std::vector<PublicKey> keys, Done done);
  // The keys of `identity` (empty when none) as they were at the call, answered once every write
  // submitted before is done.
  void lookup_keys(const std::string& realm, const std::string& identity,
                   std::function<void(std::vector<PublicKey>)> done);

  // Replaces the bundle of `identity` and adds its one-time prekeys to the pool (a prekey id already in
  // the pool is replaced, the oldest go past the cap). Answers the pool's size.
  void publish_prekeys(const std::string& realm, const std::string& identity, PrekeyBundle bundle,
                       std::function<void(const Result<size_t>&)> done);
  // Takes the bundle of `identity` with its oldest one-time prekey, which is consumed: answered once that
  // is written (and whatever the bundle waited for), so the prekey is never handed out twice. nullopt
  // when the identity has no bundle.
  using Taken = std::function<void(const Result<std::optional<TakenBundle>>&)>;
  void take_prekeys(const std::string& realm, const std::string& identity, Taken done);

  // Forgets every entry of `realm` (a removed realm); `done` once the deletions are written.
  void purge_realm(const std::string& realm, Done done);
  bool has_realm(const std::string& realm) const;

  // For a move of the store (DurableQueues::move_store's MoveAlong): appends a put of every entry to
  // `ops` and calls `commit(ops)` under the directory's lock, so that each change of the directory is
  // submitted either before the copy or after it.
  void move_along(std::vector<store::Op> ops, const std::function<void(std::vector<store::Op>)>& commit);

  struct Stats {
    size_t entries = 0, bytes = 0;
  };
  Stats stats() const;
  const KeyDirectoryLimits& limits() const { return limits_; }

 private:
  template <class Value>
  struct Entry {
    Value value;
    size_t bytes = 0;      // as the byte bound counts it
    uint64_t version = 0;  // bumped by every change; an undo applies only to the version it made
  };
  struct Realm {
    std::map<std::string, Entry<std::vector<PublicKey>>> keys;
    std::map<std::string, Entry<PrekeyBundle>> bundles;
    size_t entries() const { return keys.size() + bundles.size(); }
  };

  Status check_room(const std::string& realm, bool new_entry, size_t old_bytes, size_t new_bytes) const;
  // Puts `keys` as the key set of `identity`, under `lock` (released early only when it refuses).
  void store_keys(std::unique_lock<std::recursive_mutex>& lock, const std::string& realm, const std::string& identity,
                  std::vector<PublicKey> keys, Done done);
  // Submits `ops` (under mu_) and counts them in flight until `then` has run.
  void submit(std::vector<store::Op> ops, std::function<void(const Status&)> then);
  // Unlocks `lock` and runs `then` once every write submitted so far is done (at once when none is in
  // flight).
  void after_writes(std::unique_lock<std::recursive_mutex>& lock, std::function<void()> then);
  template <class Value>
  void undo(std::map<std::string, Entry<Value>> Realm::*table, const std::string& realm, const std::string& identity,
            uint64_t version, std::optional<Entry<Value>> before);

  store::Writer& writer_;
  const KeyDirectoryLimits limits_;
  // Recursive: changes are submitted under it (so the store sees them in memory's order), and a writer
  // that is stopping answers a submit at once, on this thread, with the callback that takes it again.
  mutable std::recursive_mutex mu_;
  std::map<std::string, Realm> realms_;
  size_t bytes_ = 0;
  uint64_t next_version_ = 1;
  size_t in_flight_ = 0;  // writes submitted whose callback has not run
};

}  // namespace siomq::broker
