// The auth store (tyo-mq §10, `auth_store:{filename}`): the durable home of the settings' realms, tokens
// and management tokens, instead of the settings file. An embedded RocksDB directory at `filename`.
//
// Guarantees:
// - The settings file's realms and tokens are imported once, at the first start with the store (the
//   records and the "imported" mark in one synced write); later copies of them in the file are ignored.
// - save() returns only when the change is synced to disk, and is all or nothing (one WriteBatch): a
//   removed realm or token never comes back after a restart.
// - Every record is validated at open like the file's auth block; an unreadable one is moved aside (the
//   quarantine, keys "quarantine/<key>") and logged, never fatal. A store that cannot be opened is a
//   start-up error naming the path and why.
// - backup() is a RocksDB checkpoint: a point-in-time copy that a server opens as its auth_store as is.
//
// Keys (readable, so RocksDB's `ldb` shows them):
//   meta/format                 → "1"
//   meta/imported               → {"at": <unix ms>, "from": "<settings file>"}
//   realm/<name>                → the realm's config object, as the settings file spells it
//   token/<16 hex digits>       → a token entry ({token, realm, role, client_id, …}); the number orders
//   mtoken/<16 hex digits>      → a management token entry    them as they were added
//   quarantine/<key>            → a record that could not be read at open
// Tokens are stored in plaintext, like the settings file holds them: admin tokens and realm keys are
// HMAC keys (§8.1) and pre-shared keys are compared as given, so the server needs them. The directory is
// created 0700 (a warning is logged for an existing one that others can read).
//
// Threading: not thread-safe. Its owner, LiveSettings, calls it under its own lock (management commands
// run on worker threads); save() and backup() block that thread for an fsync.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "wire/result.h"

namespace rocksdb {
class DB;
class WriteBatch;
}  // namespace rocksdb

namespace siomq::auth {

// The part of a settings document the auth store holds: auth.realms, auth.tokens and
// auth.management_tokens.
struct StoredAuth {
  nlohmann::json realms = nlohmann::json::object();
  nlohmann::json tokens = nlohmann::json::array();
  nlohmann::json management_tokens = nlohmann::json::array();
  bool operator==(const StoredAuth&) const = default;
  size_t size() const { return realms.size() + tokens.size() + management_tokens.size(); }
};

// Takes the stored part out of `doc` (the camelCase alias managementTokens included; an auth block left
// empty goes too). A token whose string an earlier entry already has is dropped (the first one is the
// one that matches) and so is an entry without a token string; both are logged.
StoredAuth take_stored_part(nlohmann::json& doc);
// Whether `doc` holds any of the stored part's keys.
bool holds_stored_part(const nlohmann::json& doc);
// Puts `part` into doc.auth (created when missing), all three keys present.
void put_stored_part(nlohmann::json& doc, const StoredAuth& part);

// The `auth_store` setting: `{filename}` (or `{path}`), or the path as a string. nullopt when absent;
// throws std::runtime_error for a wrong type or an empty path.
std::optional<std::string> auth_store_path(const nlohmann::json& document);

class AuthStore {
 public:
  // Opens the store at `path`, creating it when the directory is missing or empty, and loads it.
  // Throws std::runtime_error ("auth_store <path>: …") when it cannot.
  static std::unique_ptr<AuthStore> open(const std::string& path);
  ~AuthStore();
  AuthStore(const AuthStore&) = delete;
  AuthStore& operator=(const AuthStore&) = delete;

  const std::string& path() const { return path_; }
  // Whether the settings file's part was imported already (at an earlier start).
  bool imported() const { return imported_; }
  // What the store holds.
  const StoredAuth& contents() const { return contents_; }
  // Records moved to the quarantine at open.
  size_t quarantined() const { return quarantined_; }

  // The first start: `part` (from the settings file `from`) becomes the contents, with the imported mark.
  Status import(const StoredAuth& part, std::string_view from);
  // Makes the store hold `next` (as take_stored_part left it): changed and new records written, missing
  // ones deleted, in one synced write. On failure nothing changed (500).
  Status save(const StoredAuth& next);
  // A consistent copy of the store in the directory `dir`, which must not exist (409) but whose parent
  // must (400).
  Status backup(const std::string& dir);

 private:
  // A token's or management token's record: its key, by the token string.
  using Keys = std::map<std::string, std::string, std::less<>>;

  AuthStore(std::string path, std::unique_ptr<rocksdb::DB> db);
  void load();
  // Adds to `batch` what makes the store hold `next`, commits it, and on success makes it the contents.
  Status apply(const StoredAuth& next, rocksdb::WriteBatch& batch);
  // Writes `batch` synced; 500 with RocksDB's words when it cannot.
  Status commit(rocksdb::WriteBatch& batch);

  std::string path_;
  std::unique_ptr<rocksdb::DB> db_;
  bool imported_ = false;
  StoredAuth contents_;
  Keys token_keys_, mtoken_keys_;
  uint64_t next_seq_ = 1;
  size_t quarantined_ = 0;
};

}  // namespace siomq::auth
