// The settings document while the server runs: what the auth, limits and idle-eviction decisions read
// (a parsed Snapshot, swapped whole), what management commands change, and what is written back to the
// settings file. Thread-safe; a reader never sees a half-applied change.
//
// With an auth store (auth_store.h), the document is two parts merged: the settings file without
// auth.realms, auth.tokens and auth.management_tokens, and those three from the store. A change goes to
// the part it touches (the store synced, the file rewritten only when its part changed) before update()
// returns; reload() reads the file's part only, so it neither brings back nor drops what the store holds.
// Threading: every change, reload and backup runs under one mutex (management commands call update()
// from worker threads; the main thread reloads); readers take the snapshot without it.
#pragma once

#include <nlohmann/json.hpp>

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "auth/auth_config.h"
#include "auth/auth_store.h"
#include "auth/http_api_config.h"
#include "auth/limits.h"
#include "wire/result.h"

namespace siomq::auth {

// §11.2's idle_eviction block.
struct IdleEviction {
  bool enabled = true;
  int64_t ttl_ms = 300'000;
  int64_t interval_ms = 60'000;
};

// Everything decided from one version of the document.
struct Snapshot {
  AuthConfig auth;
  Limits limits;
  IdleEviction idle;
  HttpApiConfig http_api;
};

// Parses the document's auth, limits, idle_eviction and http_api; throws std::runtime_error naming the key.
Snapshot parse_snapshot(const nlohmann::json& document);

class LiveSettings {
 public:
  // Checks the parts of a document that others read (transport, storage); throws std::runtime_error.
  using Validator = std::function<void(const nlohmann::json&)>;

  // `document` as read at start-up (an object); `path` is the settings file ("" when there is none:
  // changes then live in memory only); `validate` vets every later version as a whole. Throws when the
  // document does not parse.
  // With `store`, the document's realms and tokens are imported into it when it is new (and removed from
  // the file), else ignored in favour of what it holds (and removed from the file, with a warning); a
  // store that cannot take the import throws.
  LiveSettings(nlohmann::json document, std::string path, Validator validate = {},
               std::unique_ptr<AuthStore> store = nullptr);
  ~LiveSettings();

  // The current snapshot, cached per thread: one atomic load when nothing changed. The reference stays
  // valid until this thread calls current() again after a change, so take it once per event.
  const Snapshot& current() const;
  std::shared_ptr<const Snapshot> snapshot() const;
  nlohmann::json document() const;
  const std::string& path() const { return path_; }

  // Applies `change` to a copy of the document; when it succeeds and the result parses, the copy becomes
  // live and is written to the file (temporary file, fsync, rename, fsync of the directory). A failed
  // change or an unparsable result changes nothing and is returned (400 for an invalid document).
  Status update(const std::function<Status(nlohmann::json&)>& change);

  // A cluster's document (cluster/cluster.h), another node's change: replaces this one whole like
  // update(), except for this node's own blocks (kNodeLocalKeys), and is not reported to on_changed.
  Status adopt(nlohmann::json shared);
  // The top-level blocks that belong to one node and are never taken from the cluster.
  static constexpr const char* kNodeLocalKeys[] = {"cluster", "tls", "transport", "storage", "storage_options", "auth_store"};
  // Called after every successful update() with the new document, outside the lock (the cluster
  // publishes it). Set once, before the server serves.
  void on_changed(std::function<void(const nlohmann::json&)> f) { on_changed_ = std::move(f); }

  // Re-reads the file; a broken file keeps the last good settings and returns why (code 500, or 400
  // when no file is configured).
  Status reload();
  // Re-reads the file when its size, time or inode changed since it was last read or written;
  // nullopt when it did not change.
  std::optional<Status> reload_if_changed();

  // §6.1's bootstrap: when auth is on and no admin token exists, the admin token comes from the env
  // file or the environment (auth.admin_token_env), else — unless auto_admin_token is false — 32 random
  // bytes as hex are appended to the env file. The token is live but not written to the settings file.
  // Returns a line for the log.
  std::string bootstrap_admin_token();

  // A consistent copy of the auth store in the new directory `dir` (AuthStore::backup); 400 when no
  // auth_store is configured.
  Status backup_auth_store(const std::string& dir);

 private:
  struct FileStamp {
    int64_t mtime_ns = 0;
    int64_t size = -1;
    uint64_t inode = 0;
    bool operator==(const FileStamp&) const = default;
  };
  Snapshot parse(const nlohmann::json& document) const;
  // update() and adopt(): the change applied, written and installed under mu_; `changed` (when not
  // null) gets the new document.
  Status apply(const std::function<Status(nlohmann::json&)>& change, std::optional<nlohmann::json>* changed);
  void install(nlohmann::json document, Snapshot snapshot);  // under mu_
  FileStamp stamp() const;
  // The file's document with the store's part in it: a first start imports the file's part, a later one
  // drops it (and the file is rewritten without it). Under mu_ (or in the constructor).
  nlohmann::json with_stored_part(nlohmann::json file_document);
  // update() with an auth store: each part written where it lives, then `merged` installed.
  // Logs that a reloaded document names another auth_store (it applies at the next start); throws for
  // a wrong type.
  void note_auth_store_change(const nlohmann::json& document) const;
  Status save_parts(nlohmann::json merged, Snapshot parsed, const StoredAuth& stored, nlohmann::json file_part);

  std::string path_;
  Validator validate_;
  mutable std::mutex mu_;
  nlohmann::json document_;
  std::shared_ptr<const Snapshot> snapshot_;
  std::vector<TokenEntry> bootstrap_tokens_;  // live, never written
  FileStamp seen_;
  std::unique_ptr<AuthStore> store_;
  nlohmann::json file_part_;  // with store_: the document as the settings file holds it
  std::atomic<uint64_t> generation_{0};
  std::function<void(const nlohmann::json&)> on_changed_;
};

// Writes `text` to `path` atomically: a temporary file beside it, fsync, rename, fsync of the directory.
Status write_file_atomically(const std::string& path, const std::string& text);

}  // namespace siomq::auth
