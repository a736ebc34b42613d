#include "auth/live_settings.h"

#include "auth/hmac.h"

#include <spdlog/spdlog.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace siomq::auth {
namespace {

using nlohmann::json;

IdleEviction parse_idle(const json& document) {
  IdleEviction idle;
  auto it = document.find("idle_eviction");
  if (it == document.end() || it->is_null()) return idle;
  if (!it->is_object()) throw std::runtime_error("idle_eviction must be an object");
  if (auto e = it->find("enabled"); e != it->end() && !e->is_null()) {
    if (!e->is_boolean()) throw std::runtime_error("idle_eviction.enabled must be a boolean");
    idle.enabled = e->get<bool>();
  }
  for (auto [key, out] : {std::pair{"ttl_ms", &idle.ttl_ms}, std::pair{"interval_ms", &idle.interval_ms}}) {
    auto v = it->find(key);
    if (v == it->end() || v->is_null()) continue;
    if (!v->is_number() || v->get<double>() < 1)
      throw std::runtime_error(std::string("idle_eviction.") + key + " must be a positive number of milliseconds");
    *out = static_cast<int64_t>(v->get<double>());
  }
  return idle;
}

std::optional<std::string> read_text(const std::string& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// NAME=value in a dotenv file (`export ` prefixes, quotes and comments allowed).
std::optional<std::string> env_file_value(const std::string& path, const std::string& name) {
  auto text = read_text(path);
  if (!text) return std::nullopt;
  std::istringstream lines(*text);
  std::string line;
  std::optional<std::string> found;
  while (std::getline(lines, line)) {
    std::string_view l = line;
    while (!l.empty() && (l.front() == ' ' || l.front() == '\t')) l.remove_prefix(1);
    if (l.starts_with("export ")) l.remove_prefix(7);
    if (!l.starts_with(name) || l.size() <= name.size() || l[name.size()] != '=') continue;
    l.remove_prefix(name.size() + 1);
    while (!l.empty() && (l.back() == '\r' || l.back() == ' ' || l.back() == '\t')) l.remove_suffix(1);
    if (l.size() >= 2 && (l.front() == '"' || l.front() == '\'') && l.back() == l.front()) l = l.substr(1, l.size() - 2);
    found = std::string(l);  // the last assignment wins, as in a shell
  }
  return found;
}

}  // namespace

Snapshot parse_snapshot(const json& document) {
  if (!document.is_object()) throw std::runtime_error("settings must be a JSON object");
  Snapshot s;
  auto auth = document.find("auth");
  s.auth = parse_auth(auth == document.end() ? json() : *auth);
  s.limits = parse_limits(document);
  s.idle = parse_idle(document);
  s.http_api = parse_http_api(document);
  return s;
}

Status write_file_atomically(const std::string& path, const std::string& text) {
  namespace fs = std::filesystem;
  fs::path target(path);
  fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  std::string tmp = (dir / ("." + target.filename().string() + ".tmp-" + std::to_string(::getpid()))).string();
  // A fresh file of our own: a stale one (a crash) is removed first, and O_EXCL|O_NOFOLLOW refuse a
  // file or symlink someone put in its place meanwhile, so the settings (secrets) are never written
  // through a link or into a file another user can read.
  ::unlink(tmp.c_str());
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) return make_error("cannot write " + tmp + ": " + std::strerror(errno), 500);
  size_t done = 0;
  while (done < text.size()) {
    ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      int e = errno;
      ::close(fd);
      ::unlink(tmp.c_str());
      return make_error("cannot write " + tmp + ": " + std::strerror(e), 500);
    }
    done += static_cast<size_t>(n);
  }
  bool synced = ::fsync(fd) == 0;
  ::close(fd);
  if (!synced || ::rename(tmp.c_str(), path.c_str()) != 0) {
    int e = errno;
    ::unlink(tmp.c_str());
    return make_error("cannot replace " + path + ": " + std::strerror(e), 500);
  }
  int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);  // the rename itself is durable
    ::close(dfd);
  }
  return Ok{};
}

LiveSettings::LiveSettings(json document, std::string path, Validator validate, std::unique_ptr<AuthStore> store)
    : path_(std::move(path)), validate_(std::move(validate)), store_(std::move(store)) {
  if (document.is_null()) document = json::object();
  // The caller has vetted this first version already (it read the file): only the snapshot is parsed,
  // before anything of it goes into the store.
  Snapshot s = parse_snapshot(document);
  std::lock_guard lock(mu_);
  if (store_) {
    document = with_stored_part(std::move(document));
    s = parse_snapshot(document);
  }
  install(std::move(document), std::move(s));
  seen_ = stamp();
}

LiveSettings::~LiveSettings() = default;

json LiveSettings::with_stored_part(json file_document) {
  const bool held = holds_stored_part(file_document);
  StoredAuth part = take_stored_part(file_document);
  if (!store_->imported()) {
    if (auto s = store_->import(part, path_); !s) throw std::runtime_error(s.error().message);
    spdlog::info("auth_store {}: imported {} realms, {} tokens and {} management tokens from {}", store_->path(),
                 part.realms.size(), part.tokens.size(), part.management_tokens.size(),
                 path_.empty() ? "the settings" : path_);
  } else if (held) {
    spdlog::warn("auth_store {}: auth.realms, auth.tokens and auth.management_tokens in {} are ignored: the auth "
                 "store holds them since its first start (change them with management commands)",
                 store_->path(), path_);
  }
  // Imported or ignored, they leave the file: secrets are not kept where they no longer count.
  if (held && !path_.empty()) {
    if (auto s = write_file_atomically(path_, file_document.dump(2) + "\n"); !s)
      spdlog::error("auth_store: {} still holds realms or tokens (ignored): {}", path_, s.error().message);
    else spdlog::info("auth_store: realms and tokens removed from {}", path_);
  }
  file_part_ = file_document;
  put_stored_part(file_document, store_->contents());
  return file_document;
}

Snapshot LiveSettings::parse(const json& document) const {
  if (validate_) validate_(document);
  Snapshot s = parse_snapshot(document);
  s.auth.tokens.insert(s.auth.tokens.end(), bootstrap_tokens_.begin(), bootstrap_tokens_.end());
  return s;
}

void LiveSettings::install(json document, Snapshot snapshot) {
  document_ = std::move(document);
  snapshot_ = std::make_shared<const Snapshot>(std::move(snapshot));
  // Generations are unique across instances: a thread's cache can never mistake a new instance at a
  // dead one's address for it.
  static std::atomic<uint64_t> next{1};
  generation_.store(next.fetch_add(1, std::memory_order_relaxed) + 1, std::memory_order_release);
}

const Snapshot& LiveSettings::current() const {
  struct Cache {
    const LiveSettings* owner = nullptr;
    uint64_t generation = 0;
    std::shared_ptr<const Snapshot> now, before;  // `before` keeps a reference taken just before a change alive
  };
  thread_local Cache cache;
  uint64_t g = generation_.load(std::memory_order_acquire);
  if (cache.owner != this || cache.generation != g) {
    std::lock_guard lock(mu_);
    cache.before = std::move(cache.now);
    cache.now = snapshot_;
    cache.owner = this;
    cache.generation = generation_.load(std::memory_order_relaxed);
  }
  return *cache.now;
}

std::shared_ptr<const Snapshot> LiveSettings::snapshot() const {
  std::lock_guard lock(mu_);
  return snapshot_;
}

json LiveSettings::document() const {
  std::lock_guard lock(mu_);
  return document_;
}

Status LiveSettings::update(const std::function<Status(json&)>& change) {
  std::optional<json> changed;
  Status st = apply(change, &changed);
  if (changed && on_changed_) on_changed_(*changed);  // outside the lock: the observer may read us
  return st;
}

Status LiveSettings::adopt(json shared) {
  if (!shared.is_object()) return make_error("invalid settings: not an object", 400);
  return apply(
      [&](json& doc) {
        // This node's own blocks stay (its node_id, certificate paths, store, tuning); the rest is the cluster's.
        for (const char* key : kNodeLocalKeys) {
          if (doc.contains(key)) shared[key] = doc[key];
          else shared.erase(key);
        }
        doc = std::move(shared);
        return Status(Ok{});
      },
      nullptr);
}

Status LiveSettings::apply(const std::function<Status(json&)>& change, std::optional<json>* changed) {
  std::lock_guard lock(mu_);
  json copy = document_;
  if (auto s = change(copy); !s) return s;
  StoredAuth stored;
  json file_part;
  if (store_) {
    // Split, then merged again: `copy` is then exactly what the two places will hold.
    file_part = copy;
    stored = take_stored_part(file_part);
    copy = file_part;
    put_stored_part(copy, stored);
  }
  Snapshot parsed;
  try {
    parsed = parse(copy);
  } catch (const std::exception& e) {
    return make_error(std::string("invalid settings: ") + e.what(), 400);
  }
  if (store_) {
    Status saved = save_parts(std::move(copy), std::move(parsed), stored, std::move(file_part));
    if (saved && changed) *changed = document_;
    return saved;
  }
  if (!path_.empty()) {
    if (auto s = write_file_atomically(path_, copy.dump(2) + "\n"); !s) return s;
    seen_ = stamp();
  }
  install(std::move(copy), std::move(parsed));
  if (changed) *changed = document_;
  return Ok{};
}

Status LiveSettings::save_parts(json merged, Snapshot parsed, const StoredAuth& stored, json file_part) {
  const bool stored_changed = stored != store_->contents();
  std::optional<StoredAuth> before;
  if (stored_changed) {
    before = store_->contents();
    if (auto s = store_->save(stored); !s) return s;
  }
  if (file_part != file_part_ && !path_.empty()) {
    if (auto s = write_file_atomically(path_, file_part.dump(2) + "\n"); !s) {
      // All or nothing: the store goes back to what it held.
      if (before) {
        if (auto undo = store_->save(*before); !undo)
          spdlog::error("auth_store: a change is stored but the settings file was not written: {}", undo.error().message);
      }
      return s;
    }
    seen_ = stamp();
  }
  file_part_ = std::move(file_part);
  install(std::move(merged), std::move(parsed));
  return Ok{};
}

Status LiveSettings::reload() {
  if (path_.empty()) return make_error("no settings file is configured", 400);
  std::lock_guard lock(mu_);
  seen_ = stamp();
  auto text = read_text(path_);
  if (!text) return make_error("cannot read settings file " + path_, 500);
  json doc = json::parse(*text, nullptr, false);
  if (doc.is_discarded()) return make_error("settings file " + path_ + " is not valid JSON", 500);
  try {
    note_auth_store_change(doc);
    if (store_) {
      // The file's part is checked before the store's part replaces it in the merged document.
      json file_part = doc;
      take_stored_part(file_part);
      json merged = file_part;
      put_stored_part(merged, store_->contents());
      Snapshot parsed = parse(merged);
      doc = with_stored_part(std::move(doc));
      seen_ = stamp();
      install(std::move(doc), std::move(parsed));
      return Ok{};
    }
    Snapshot parsed = parse(doc);
    install(std::move(doc), std::move(parsed));
  } catch (const std::exception& e) {
    return make_error("settings file " + path_ + ": " + e.what(), 500);
  }
  return Ok{};
}

void LiveSettings::note_auth_store_change(const json& doc) const {
  auto now = auth_store_path(doc);  // a wrong type throws: the reload is refused
  std::optional<std::string> running = store_ ? std::optional<std::string>(store_->path()) : std::nullopt;
  if (now != running) spdlog::warn("settings: a change of auth_store applies at the next start");
}

std::optional<Status> LiveSettings::reload_if_changed() {
  if (path_.empty()) return std::nullopt;
  {
    std::lock_guard lock(mu_);
    if (stamp() == seen_) return std::nullopt;
  }
  return reload();
}

LiveSettings::FileStamp LiveSettings::stamp() const {
  struct stat st {};
  if (::stat(path_.c_str(), &st) != 0) return {};
  return {static_cast<int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec, static_cast<int64_t>(st.st_size),
          static_cast<uint64_t>(st.st_ino)};
}

std::string LiveSettings::bootstrap_admin_token() {
  std::lock_guard lock(mu_);
  const AuthConfig& config = snapshot_->auth;
  if (!config.enabled || config.has_admin_token()) return "";
  std::string env_file = config.env_file.empty() ? ".env" : config.env_file;
  std::string token;
  std::string source;
  if (const char* v = std::getenv(config.admin_token_env.c_str()); v && *v) {
    token = v;
    source = "the environment (" + config.admin_token_env + ")";
  } else if (auto v = env_file_value(env_file, config.admin_token_env); v && !v->empty()) {
    token = *v;
    source = env_file + " (" + config.admin_token_env + ")";
  } else if (!config.auto_admin_token) {
    return "auth: no admin token (auto_admin_token is false); signed management commands need a realm manager_key";
  } else {
    token = random_hex(32);
    auto existing = read_text(env_file).value_or("");
    std::string line = (existing.empty() || existing.back() == '\n' ? "" : "\n") + config.admin_token_env + "=" + token + "\n";
    // Created 0600, never through a symlink; an existing file is made 0600 before the secret goes in.
    int fd = ::open(env_file.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
    bool ok = fd >= 0 && ::fchmod(fd, 0600) == 0;
    for (size_t done = 0; ok && done < line.size();) {
      ssize_t n = ::write(fd, line.data() + done, line.size() - done);
      if (n < 0 && errno == EINTR) continue;
      ok = n > 0;
      if (ok) done += static_cast<size_t>(n);
    }
    ok = ok && ::fsync(fd) == 0;
    if (fd >= 0) ::close(fd);
    if (!ok) throw std::runtime_error("cannot append the generated admin token to " + env_file);
    source = "a new random token appended to " + env_file + " as " + config.admin_token_env;
  }
  bootstrap_tokens_.push_back(TokenEntry{token, "*", "admin", "", ""});
  Snapshot parsed = parse(document_);
  install(document_, std::move(parsed));
  return "auth: admin token from " + source;
}

Status LiveSettings::backup_auth_store(const std::string& dir) {
  std::lock_guard lock(mu_);
  if (!store_) return make_error("no auth_store is configured", 400);
  return store_->backup(dir);
}

}  // namespace siomq::auth
