#include "broker/key_directory.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <set>
#include <utility>

#include "store/writer.h"
#include "wire/clock.h"
#include "wire/log_text.h"

namespace siomq::broker {
namespace {

// The store's names of the two directories (store/directory.h).
constexpr std::string_view kKeysDirectory = "e2ee";
constexpr std::string_view kPrekeysDirectory = "prekeys";
constexpr size_t kEntryOverhead = 256;

Error full() { return make_error("the key directory is full", 507); }

bool bad_realm(const std::string& realm) { return realm.find('\0') != std::string::npos; }
Error bad_realm_error() { return make_error("a realm name holding a NUL byte cannot be kept in the key directory", 400); }

size_t entry_bytes(const std::string& identity, const std::string& value) {
  return identity.size() + value.size() + kEntryOverhead;
}

store::Op put(std::string_view directory, const std::string& realm, const std::string& identity, std::string value,
              int64_t updated_ms) {
  return store::put(store::DirectoryEntry{std::string(directory), realm, identity, std::move(value), updated_ms});
}

// The pool after a publish: the old one without the ids the new prekeys reuse, then the new ones (the
// last of a repeated id wins), the oldest dropped past `cap`.
std::deque<OneTimePrekey> merged_pool(std::deque<OneTimePrekey> old, std::deque<OneTimePrekey> added, size_t cap) {
  std::set<uint64_t> seen;
  std::deque<OneTimePrekey> fresh;
  for (auto it = added.rbegin(); it != added.rend(); ++it) {
    if (seen.insert(it->id).second) fresh.push_front(std::move(*it));
  }
  std::erase_if(old, [&](const OneTimePrekey& k) { return seen.count(k.id) > 0; });
  for (auto& k : fresh) old.push_back(std::move(k));
  while (old.size() > cap) old.pop_front();
  return old;
}

}  // namespace

KeyDirectory::KeyDirectory(store::Writer& writer, KeyDirectoryLimits limits) : writer_(writer), limits_(limits) {}

std::vector<store::Op> KeyDirectory::load(const std::vector<store::DirectoryEntry>& entries) {
  std::vector<store::Op> quarantine;
  std::lock_guard<std::recursive_mutex> lock(mu_);
  for (const auto& e : entries) {
    if (e.directory != kKeysDirectory && e.directory != kPrekeysDirectory) continue;  // another owner's
    std::optional<Error> error;
    if (bad_realm(e.realm)) {
      error = bad_realm_error();
    } else if (e.directory == kKeysDirectory) {
      auto keys = decode_keys(e.value);
      if (keys && keys->size() <= limits_.max_keys_per_identity) {
        auto& entry = realms_[e.realm].keys[e.key];
        entry = {std::move(*keys), entry_bytes(e.key, e.value), next_version_++};
        bytes_ += entry.bytes;
      } else {
        error = keys ? make_error("too many keys") : keys.error();
      }
    } else {
      auto bundle = read_bundle(e.value, true);
      if (bundle && bundle->one_time.size() <= limits_.max_one_time_prekeys) {
        auto& entry = realms_[e.realm].bundles[e.key];
        entry = {std::move(*bundle), entry_bytes(e.key, e.value), next_version_++};
        bytes_ += entry.bytes;
      } else {
        error = bundle ? make_error("too many one-time prekeys") : bundle.error();
      }
    }
    if (error) {
      spdlog::warn("store: a {} directory entry of realm '{}' cannot be used ({}); moved to the quarantine", e.directory,
                   log_text(e.realm), error->message);
      quarantine.push_back(store::quarantine(e));
    }
  }
  size_t held = 0;
  for (const auto& [name, r] : realms_) held += r.entries();
  spdlog::info("store: key directory: {} entries in {} realms ({} bytes)", held, realms_.size(), bytes_);
  return quarantine;
}

Status KeyDirectory::check_room(const std::string& realm, bool new_entry, size_t old_bytes, size_t new_bytes) const {
  if (new_entry) {
    auto r = realms_.find(realm);
    if (r != realms_.end() && r->second.entries() >= limits_.max_entries_per_realm) return full();
  }
  if (new_bytes > old_bytes && bytes_ + (new_bytes - old_bytes) > limits_.max_bytes) return full();
  return Ok{};
}

void KeyDirectory::submit(std::vector<store::Op> ops, std::function<void(const Status&)> then) {
  ++in_flight_;
  writer_.submit(std::move(ops), [this, then = std::move(then)](const Status& s) {
    then(s);
    std::lock_guard<std::recursive_mutex> lock(mu_);
    --in_flight_;
  });
}

void KeyDirectory::after_writes(std::unique_lock<std::recursive_mutex>& lock, std::function<void()> then) {
  if (in_flight_ == 0) {
    lock.unlock();
    return then();
  }
  lock.unlock();
  // Callbacks run in submission order: when this empty write's runs, every earlier one has.
  writer_.submit({}, [then = std::move(then)](const Status&) { then(); });
}

template <class Value>
void KeyDirectory::undo(std::map<std::string, Entry<Value>> Realm::*table, const std::string& realm,
                        const std::string& identity, uint64_t version, std::optional<Entry<Value>> before) {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  auto r = realms_.find(realm);
  if (r == realms_.end()) return;
  auto& entries = r->second.*table;
  auto e = entries.find(identity);
  if (e == entries.end() || e->second.version != version) return;  // changed since: its own write carries it
  bytes_ -= e->second.bytes;
  if (before) {
    bytes_ += before->bytes;
    e->second = std::move(*before);
  } else {
    entries.erase(e);
    if (r->second.entries() == 0) realms_.erase(r);
  }
}

void KeyDirectory::publish_key(const std::string& realm, const std::string& identity, PublicKey key, Done done) {
  if (bad_realm(realm)) return done(bad_realm_error());
  std::unique_lock<std::recursive_mutex> lock(mu_);
  std::vector<PublicKey> keys;
  if (auto r = realms_.find(realm); r != realms_.end()) {
    if (auto e = r->second.keys.find(identity); e != r->second.keys.end()) keys = e->second.value;
  }
  key.updated_ms = unix_ms();
  auto published = with_key(std::move(keys), std::move(key), limits_.max_keys_per_identity);
  if (!published) {
    lock.unlock();
    return done(published.error());
  }
  store_keys(lock, realm, identity, std::move(*published), std::move(done));
}

void KeyDirectory::replace_keys(const std::string& realm, const std::string& identity, std::vector<PublicKey> keys,
                                Done done) {
  if (bad_realm(realm)) return done(bad_realm_error());
  if (keys.empty() || keys.size() > limits_.max_keys_per_identity)
    return done(make_error("a key set holds 1 to " + std::to_string(limits_.max_keys_per_identity) + " keys", 400));
  std::unique_lock<std::recursive_mutex> lock(mu_);
  store_keys(lock, realm, identity, std::move(keys), std::move(done));
}

void KeyDirectory::store_keys(std::unique_lock<std::recursive_mutex>& lock, const std::string& realm,
                              const std::string& identity, std::vector<PublicKey> keys, Done done) {
  std::optional<Entry<std::vector<PublicKey>>> before;
  if (auto r = realms_.find(realm); r != realms_.end()) {
    if (auto e = r->second.keys.find(identity); e != r->second.keys.end()) before = e->second;
  }
  if (before && before->value == keys) {
    // A copy from the cluster that changes nothing is not written again; answered once what was written
    // before it is on disk.
    return after_writes(lock, [done = std::move(done)] { done(Ok{}); });
  }
  int64_t updated = 0;
  for (const auto& k : keys) updated = std::max(updated, k.updated_ms);
  std::string value = encode_keys(keys);
  const size_t bytes = entry_bytes(identity, value);
  if (auto room = check_room(realm, !before, before ? before->bytes : 0, bytes); !room) {
    lock.unlock();
    return done(room.error());
  }
  auto& entry = realms_[realm].keys[identity];
  bytes_ = bytes_ - (before ? before->bytes : 0) + bytes;
  entry = {std::move(keys), bytes, next_version_++};
  submit({put(kKeysDirectory, realm, identity, std::move(value), updated)},
         [this, realm, identity, version = entry.version, before = std::move(before), done = std::move(done)](
             const Status& s) mutable {
           if (!s) undo(&Realm::keys, realm, identity, version, std::move(before));
           done(s);
         });
}

void KeyDirectory::lookup_keys(const std::string& realm, const std::string& identity,
                               std::function<void(std::vector<PublicKey>)> done) {
  std::unique_lock<std::recursive_mutex> lock(mu_);
  std::vector<PublicKey> keys;
  if (auto r = realms_.find(realm); r != realms_.end()) {
    if (auto e = r->second.keys.find(identity); e != r->second.keys.end()) keys = e->second.value;
  }
  after_writes(lock, [keys = std::move(keys), done = std::move(done)]() mutable { done(std::move(keys)); });
}

void KeyDirectory::publish_prekeys(const std::string& realm, const std::string& identity, PrekeyBundle bundle,
                                   std::function<void(const Result<size_t>&)> done) {
  if (bad_realm(realm)) return done(bad_realm_error());
  std::unique_lock<std::recursive_mutex> lock(mu_);
  std::optional<Entry<PrekeyBundle>> before;
  if (auto r = realms_.find(realm); r != realms_.end()) {
    if (auto e = r->second.bundles.find(identity); e != r->second.bundles.end()) before = e->second;
  }
  bundle.one_time = merged_pool(before ? before->value.one_time : std::deque<OneTimePrekey>{},
                                std::move(bundle.one_time), limits_.max_one_time_prekeys);
  bundle.updated_ms = unix_ms();
  std::string value = encode_bundle(bundle);
  const size_t bytes = entry_bytes(identity, value);
  if (auto room = check_room(realm, !before, before ? before->bytes : 0, bytes); !room) {
    lock.unlock();
    return done(room.error());
  }
  const size_t pool = bundle.one_time.size();
  const int64_t updated = bundle.updated_ms;
  auto& entry = realms_[realm].bundles[identity];
  bytes_ = bytes_ - (before ? before->bytes : 0) + bytes;
  entry = {std::move(bundle), bytes, next_version_++};
  submit({put(kPrekeysDirectory, realm, identity, std::move(value), updated)},
         [this, realm, identity, pool, version = entry.version, before = std::move(before), done = std::move(done)](
             const Status& s) mutable {
           if (!s) undo(&Realm::bundles, realm, identity, version, std::move(before));
           if (s) done(pool);
           else done(s.error());
         });
}

void KeyDirectory::take_prekeys(const std::string& realm, const std::string& identity, Taken done) {
  std::unique_lock<std::recursive_mutex> lock(mu_);
  Entry<PrekeyBundle>* entry = nullptr;
  if (auto r = realms_.find(realm); r != realms_.end()) {
    if (auto e = r->second.bundles.find(identity); e != r->second.bundles.end()) entry = &e->second;
  }
  if (!entry) {
    lock.unlock();
    return done(std::optional<TakenBundle>{});
  }
  PrekeyBundle& stored = entry->value;
  TakenBundle taken;
  if (!stored.one_time.empty()) {
    taken.one_time = std::move(stored.one_time.front());
    stored.one_time.pop_front();
  }
  taken.remaining = stored.one_time.size();
  taken.bundle = stored;
  taken.bundle.one_time.clear();
  if (!taken.one_time) {
    // Nothing consumed, nothing to write: answered once the bundle's own write (if in flight) is done.
    return after_writes(lock, [taken = std::move(taken), done = std::move(done)] { done(std::optional(taken)); });
  }
  // Consumed in memory at once (no second taker can get it) and answered once that is on disk. A failed
  // write leaves it consumed: it was never handed out, and losing one one-time prekey is harmless.
  std::string value = encode_bundle(stored);
  const size_t bytes = entry_bytes(identity, value);
  bytes_ = bytes_ - entry->bytes + bytes;
  entry->bytes = bytes;
  entry->version = next_version_++;
  submit({put(kPrekeysDirectory, realm, identity, std::move(value), stored.updated_ms)},
         [taken = std::move(taken), done = std::move(done)](const Status& s) {
           if (s) done(std::optional(taken));
           else done(s.error());
         });
}

void KeyDirectory::purge_realm(const std::string& realm, Done done) {
  std::unique_lock<std::recursive_mutex> lock(mu_);
  std::vector<store::Op> ops;
  if (auto r = realms_.find(realm); r != realms_.end()) {
    for (const auto& [identity, e] : r->second.keys) {
      ops.push_back(store::erase_directory_entry(kKeysDirectory, realm, identity));
      bytes_ -= e.bytes;
    }
    for (const auto& [identity, e] : r->second.bundles) {
      ops.push_back(store::erase_directory_entry(kPrekeysDirectory, realm, identity));
      bytes_ -= e.bytes;
    }
    realms_.erase(r);
  }
  if (ops.empty()) {
    lock.unlock();
    return done(Ok{});
  }
  submit(std::move(ops), [done = std::move(done)](const Status& s) { done(s); });
}

bool KeyDirectory::has_realm(const std::string& realm) const {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  return realms_.count(realm) > 0;
}

void KeyDirectory::move_along(std::vector<store::Op> ops, const std::function<void(std::vector<store::Op>)>& commit) {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  for (const auto& [realm, r] : realms_) {
    for (const auto& [identity, e] : r.keys) {
      int64_t updated = 0;
      for (const auto& k : e.value) updated = std::max(updated, k.updated_ms);
      ops.push_back(put(kKeysDirectory, realm, identity, encode_keys(e.value), updated));
    }
    for (const auto& [identity, e] : r.bundles)
      ops.push_back(put(kPrekeysDirectory, realm, identity, encode_bundle(e.value), e.value.updated_ms));
  }
  commit(std::move(ops));
}

KeyDirectory::Stats KeyDirectory::stats() const {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  Stats s;
  for (const auto& [name, r] : realms_) s.entries += r.entries();
  s.bytes = bytes_;
  return s;
}

}  // namespace siomq::broker
