#include "auth/auth_store.h"

#include <fcntl.h>
#include <rocksdb/db.h>
#include <rocksdb/options.h>
#include <rocksdb/utilities/checkpoint.h>
#include <rocksdb/write_batch.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <set>
#include <stdexcept>

#include "auth/auth_config.h"
#include "auth/hmac.h"
#include "wire/log_text.h"

namespace siomq::auth {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

constexpr std::string_view kFormatKey = "meta/format";
constexpr std::string_view kFormat = "1";
constexpr std::string_view kImportedKey = "meta/imported";
constexpr std::string_view kRealmPrefix = "realm/";
constexpr std::string_view kTokenPrefix = "token/";
constexpr std::string_view kManagementTokenPrefix = "mtoken/";
constexpr std::string_view kQuarantinePrefix = "quarantine/";
constexpr size_t kSeqDigits = 16;
constexpr size_t kMaxBackupPath = 4096;

std::string_view view(const rocksdb::Slice& s) { return {s.data(), s.size()}; }

std::string seq_key(std::string_view prefix, uint64_t seq) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string key(prefix);
  for (int shift = 60; shift >= 0; shift -= 4) key.push_back(kHex[(seq >> shift) & 0xf]);
  return key;
}

std::optional<uint64_t> seq_of(std::string_view digits) {
  if (digits.size() != kSeqDigits) return std::nullopt;
  uint64_t seq = 0;
  for (char c : digits) {
    int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
    if (d < 0) return std::nullopt;
    seq = seq << 4 | static_cast<uint64_t>(d);
  }
  return seq;
}

// A token list entry's token string, or "" when it has none.
std::string token_of(const json& entry) {
  if (!entry.is_object()) return "";
  auto it = entry.find("token");
  return it != entry.end() && it->is_string() ? it->get<std::string>() : "";
}

// Moves `list`'s entries into `out`, dropping those without a token string and repeated token strings
// (`seen` spans both token lists of one kind).
void take_tokens(json&& list, json& out, std::set<std::string>& seen, const char* what) {
  if (!list.is_array()) return;
  for (auto& entry : list) {
    std::string token = token_of(entry);
    if (token.empty()) {
      spdlog::warn("auth_store: an auth.{} entry without a token string dropped", what);
    } else if (!seen.insert(token).second) {
      // Logged by hash: the log is not a place for secrets.
      spdlog::warn("auth_store: a second auth.{} entry for the token {}… dropped (the first one is the one that matches)",
                   what, sha256_hex(token).substr(0, 12));
    } else {
      out.push_back(std::move(entry));
    }
  }
}

// Why the record under `key` cannot be loaded: it must read like the same entry of the file's auth block.
std::optional<std::string> invalid_record(std::string_view key, const json& value) {
  json block;
  if (key.starts_with(kRealmPrefix)) block["realms"][std::string(key.substr(kRealmPrefix.size()))] = value;
  else if (key.starts_with(kTokenPrefix)) block["tokens"] = json::array({value});
  else block["management_tokens"] = json::array({value});
  try {
    parse_auth(block);
  } catch (const std::exception& e) {
    return e.what();
  }
  return std::nullopt;
}

rocksdb::Options store_options(bool create) {
  rocksdb::Options o;
  o.create_if_missing = create;
  o.paranoid_checks = true;
  // A few hundred kilobytes of settings: small buffers, one background job, few log files.
  o.write_buffer_size = 4 << 20;
  o.max_background_jobs = 1;
  o.keep_log_file_num = 2;
  o.max_log_file_size = 1 << 20;
  return o;
}

[[noreturn]] void fail(const std::string& path, const std::string& why) {
  throw std::runtime_error("auth_store " + path + ": " + why);
}

// Prepares the directory; true when the store is to be created (the directory is missing or empty).
bool prepare_directory(const std::string& path) {
  std::error_code ec;
  auto status = fs::status(path, ec);
  if (ec && ec != std::errc::no_such_file_or_directory) fail(path, ec.message());
  if (!fs::exists(status)) {
    fs::create_directories(path, ec);
    if (ec) fail(path, "cannot create the directory: " + ec.message());
    // Tokens and keys in plaintext: for this user only, whatever the umask.
    fs::permissions(path, fs::perms::owner_all, ec);
    spdlog::info("auth_store: created {}", path);
    return true;
  }
  if (!fs::is_directory(status))
    fail(path, "not a directory (siomq keeps its auth store in a RocksDB directory; a tyo-mq SQLite auth store "
               "cannot be read: give a new path, and the realms and tokens of the settings file are imported)");
  if ((status.permissions() & (fs::perms::group_all | fs::perms::others_all)) != fs::perms::none)
    spdlog::warn("auth_store {}: the directory is open to other users; it holds tokens and keys (chmod 700 it)", path);
  return fs::is_empty(path, ec) && !ec;
}

void sync_directory(const fs::path& dir) {
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  ::fsync(fd);
  ::close(fd);
}

int64_t unix_ms_now() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

}  // namespace

StoredAuth take_stored_part(json& doc) {
  StoredAuth part;
  auto a = doc.is_object() ? doc.find("auth") : doc.end();
  if (!doc.is_object() || a == doc.end() || !a->is_object()) return part;
  if (auto r = a->find("realms"); r != a->end()) {
    if (r->is_object()) part.realms = std::move(*r);
    a->erase(r);
  }
  std::set<std::string> seen;
  if (auto t = a->find("tokens"); t != a->end()) {
    take_tokens(std::move(*t), part.tokens, seen, "tokens");
    a->erase(t);
  }
  seen.clear();
  for (const char* key : {"management_tokens", "managementTokens"}) {
    if (auto t = a->find(key); t != a->end()) {
      take_tokens(std::move(*t), part.management_tokens, seen, "management_tokens");
      a->erase(t);
    }
  }
  if (a->empty()) doc.erase(a);
  return part;
}

bool holds_stored_part(const json& doc) {
  auto a = doc.is_object() ? doc.find("auth") : doc.end();
  if (!doc.is_object() || a == doc.end() || !a->is_object()) return false;
  return a->contains("realms") || a->contains("tokens") || a->contains("management_tokens") ||
         a->contains("managementTokens");
}

void put_stored_part(json& doc, const StoredAuth& part) {
  json& a = doc["auth"];
  if (!a.is_object()) a = json::object();
  a["realms"] = part.realms;
  a["tokens"] = part.tokens;
  a["management_tokens"] = part.management_tokens;
}

std::optional<std::string> auth_store_path(const json& document) {
  auto it = document.is_object() ? document.find("auth_store") : document.end();
  if (!document.is_object() || it == document.end() || it->is_null()) return std::nullopt;
  const json* path = &*it;
  if (it->is_object()) {
    auto f = it->find("filename");
    if (f == it->end()) f = it->find("path");
    path = f == it->end() ? nullptr : &*f;
  }
  if (!path || !path->is_string() || path->get<std::string>().empty() ||
      path->get<std::string>().find('\0') != std::string::npos)
    throw std::runtime_error("auth_store must be {\"filename\": \"<directory>\"} (or the directory as a string)");
  return path->get<std::string>();
}

AuthStore::AuthStore(std::string path, std::unique_ptr<rocksdb::DB> db) : path_(std::move(path)), db_(std::move(db)) {}

AuthStore::~AuthStore() = default;

std::unique_ptr<AuthStore> AuthStore::open(const std::string& path) {
  bool create = prepare_directory(path);
  rocksdb::DB* raw = nullptr;
  auto s = rocksdb::DB::Open(store_options(create), path, &raw);
  if (!s.ok()) fail(path, "cannot be opened (is it a siomq auth store?): " + s.ToString());
  std::unique_ptr<AuthStore> store(new AuthStore(path, std::unique_ptr<rocksdb::DB>(raw)));
  std::string format;
  s = store->db_->Get(rocksdb::ReadOptions(), std::string(kFormatKey), &format);
  if (s.IsNotFound()) {
    // A store created but cut short before its format was written holds nothing at all.
    std::unique_ptr<rocksdb::Iterator> it(store->db_->NewIterator(rocksdb::ReadOptions()));
    it->SeekToFirst();
    if (it->Valid()) fail(path, "a RocksDB directory that is not a siomq auth store (it has no meta/format)");
    rocksdb::WriteBatch batch;
    batch.Put(std::string(kFormatKey), std::string(kFormat));
    if (auto w = store->commit(batch); !w) fail(path, w.error().message);
  } else if (!s.ok()) {
    fail(path, "cannot be read: " + s.ToString());
  } else if (format != kFormat) {
    fail(path, "format " + format + " is not this siomq's (" + std::string(kFormat) + ")");
  }
  store->load();
  return store;
}

// Reads every record in key order (realms by name, tokens as they were added); a record that does not
// read like the settings file's entry is moved to the quarantine.
void AuthStore::load() {
  rocksdb::WriteBatch quarantine;
  rocksdb::ReadOptions options;
  options.fill_cache = false;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(options));
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    std::string_view key = view(it->key());
    if (key.starts_with(kQuarantinePrefix) || key == kFormatKey) continue;
    if (key == kImportedKey) {
      imported_ = true;
      continue;
    }
    std::optional<std::string> why;
    json value = json::parse(view(it->value()), nullptr, false);
    bool realm = key.starts_with(kRealmPrefix), token = key.starts_with(kTokenPrefix),
         mtoken = key.starts_with(kManagementTokenPrefix);
    auto seq = token ? seq_of(key.substr(kTokenPrefix.size())) : mtoken ? seq_of(key.substr(kManagementTokenPrefix.size())) : std::optional<uint64_t>(0);
    if (!realm && !token && !mtoken) why = "not a key of the auth store";
    else if (!seq) why = "a token key must end in 16 hex digits";
    else if (value.is_discarded()) why = "not JSON";
    else why = invalid_record(key, value);
    if (!why && !realm) {
      Keys& keys = token ? token_keys_ : mtoken_keys_;
      if (!keys.emplace(token_of(value), std::string(key)).second) why = "a second record of the same token";
      else (token ? contents_.tokens : contents_.management_tokens).push_back(std::move(value));
      next_seq_ = std::max(next_seq_, *seq + 1);
    } else if (!why) {
      contents_.realms[std::string(key.substr(kRealmPrefix.size()))] = std::move(value);
    }
    if (why) {
      ++quarantined_;
      spdlog::warn("auth_store {}: record '{}' cannot be read ({}); moved to the quarantine", path_,
                   log_text(key, 80), *why);
      quarantine.Put(std::string(kQuarantinePrefix).append(key), it->value());
      quarantine.Delete(it->key());
    }
  }
  if (!it->status().ok()) fail(path_, "reading failed: " + it->status().ToString());
  if (quarantined_) {
    if (auto s = commit(quarantine); !s) fail(path_, s.error().message);
  }
}

Status AuthStore::commit(rocksdb::WriteBatch& batch) {
  rocksdb::WriteOptions options;
  options.sync = true;
  auto s = db_->Write(options, &batch);
  if (!s.ok()) return make_error("auth_store " + path_ + ": write failed: " + s.ToString(), 500);
  return Ok{};
}

Status AuthStore::import(const StoredAuth& part, std::string_view from) {
  if (imported_) return make_error("auth_store " + path_ + ": imported already", 409);
  // The mark and the records in one write: never the one without the other.
  rocksdb::WriteBatch batch;
  batch.Put(std::string(kImportedKey), json{{"at", unix_ms_now()}, {"from", std::string(from)}}.dump());
  if (auto s = apply(part, batch); !s) return s;
  imported_ = true;
  return Ok{};
}

namespace {

// Puts a token list's new and changed entries into `batch` and deletes its entries that are gone.
// `keys` is the list's keys before, `after` gets its keys after; `next_seq` numbers new entries.
void diff_tokens(const json& before, const json& now, const std::map<std::string, std::string, std::less<>>& keys,
                 std::string_view prefix, rocksdb::WriteBatch& batch, std::map<std::string, std::string, std::less<>>& after,
                 uint64_t& next_seq) {
  std::map<std::string, const json*, std::less<>> old;
  for (const auto& e : before) old.emplace(token_of(e), &e);
  for (const auto& e : now) {
    std::string token = token_of(e);
    auto k = keys.find(token);
    std::string key = k != keys.end() ? k->second : seq_key(prefix, next_seq++);
    auto o = old.find(token);
    if (o == old.end() || *o->second != e) batch.Put(key, e.dump());
    after.emplace(std::move(token), std::move(key));
  }
  for (const auto& [token, key] : keys) {
    if (!after.contains(token)) batch.Delete(key);
  }
}

}  // namespace

Status AuthStore::save(const StoredAuth& next) {
  rocksdb::WriteBatch batch;
  return apply(next, batch);
}

Status AuthStore::apply(const StoredAuth& next, rocksdb::WriteBatch& batch) {
  for (const auto& [name, cfg] : contents_.realms.items()) {
    if (!next.realms.contains(name)) batch.Delete(std::string(kRealmPrefix).append(name));
  }
  for (const auto& [name, cfg] : next.realms.items()) {
    auto was = contents_.realms.find(name);
    if (was == contents_.realms.end() || *was != cfg) batch.Put(std::string(kRealmPrefix).append(name), cfg.dump());
  }
  Keys tokens, mtokens;
  uint64_t seq = next_seq_;
  diff_tokens(contents_.tokens, next.tokens, token_keys_, kTokenPrefix, batch, tokens, seq);
  diff_tokens(contents_.management_tokens, next.management_tokens, mtoken_keys_, kManagementTokenPrefix, batch, mtokens, seq);
  if (auto s = commit(batch); !s) return s;
  contents_ = next;
  token_keys_ = std::move(tokens);
  mtoken_keys_ = std::move(mtokens);
  next_seq_ = seq;
  return Ok{};
}

Status AuthStore::backup(const std::string& dir) {
  if (dir.empty() || dir.size() > kMaxBackupPath || dir.find('\0') != std::string::npos)
    return make_error("path must be a directory path of at most 4096 bytes", 400);
  fs::path target = fs::absolute(dir);
  std::error_code ec;
  if (fs::exists(fs::symlink_status(target, ec))) return make_error(target.string() + " exists already", 409);
  if (!fs::is_directory(target.parent_path(), ec))
    return make_error("the directory " + target.parent_path().string() + " does not exist", 400);
  rocksdb::Checkpoint* raw = nullptr;
  auto s = rocksdb::Checkpoint::Create(db_.get(), &raw);
  std::unique_ptr<rocksdb::Checkpoint> checkpoint(raw);
  // The memtable is flushed first (log_size_for_flush 0), so the copy needs no WAL replay; its files
  // are hard links where the file system allows, copies elsewhere.
  if (s.ok()) s = checkpoint->CreateCheckpoint(target.string(), 0);
  if (!s.ok()) return make_error("backup to " + target.string() + " failed: " + s.ToString(), 500);
  fs::permissions(target, fs::perms::owner_all, ec);
  sync_directory(target);
  sync_directory(target.parent_path());
  spdlog::info("auth_store {}: backed up to {}", path_, target.string());
  return Ok{};
}

}  // namespace siomq::auth
