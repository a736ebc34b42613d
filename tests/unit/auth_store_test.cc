// The auth store (auth/auth_store.h) and LiveSettings over it: round trips, the import from the settings
// file done once, durable removals, quarantined records, backups, and the paths it refuses.
#include "auth/auth_store.h"

#include <gtest/gtest.h>
#include <rocksdb/db.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "auth/live_settings.h"
#include "temp_store.h"

namespace siomq::auth {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;
using store::TempDir;

std::string read(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

void write(const fs::path& path, const std::string& text) { std::ofstream(path) << text; }

StoredAuth sample() {
  StoredAuth a;
  a.realms["team"] = {{"required", true}, {"manager_key", "mk"}, {"key", "psk"}};
  a.realms["open"] = {{"required", false}};
  a.tokens.push_back({{"token", "admin-secret"}, {"realm", "*"}, {"role", "admin"}});
  a.tokens.push_back({{"token", "t1"}, {"realm", "team"}, {"role", "producer"}, {"client_id", "c1"}});
  a.tokens.push_back({{"token", "t2"}, {"realm", "team"}, {"role", "consumer"}, {"approved_at", 1234}});
  a.management_tokens.push_back({{"token", "m1"}, {"realm_prefix", "tmp-"}, {"ephemeral_only", true}});
  return a;
}

// Writes raw records into the store's RocksDB (the store closed meanwhile).
void put_raw(const fs::path& dir, const std::vector<std::pair<std::string, std::string>>& records) {
  rocksdb::DB* raw = nullptr;
  rocksdb::Options options;
  options.create_if_missing = true;
  ASSERT_TRUE(rocksdb::DB::Open(options, dir.string(), &raw).ok());
  std::unique_ptr<rocksdb::DB> db(raw);
  for (const auto& [k, v] : records) ASSERT_TRUE(db->Put(rocksdb::WriteOptions(), k, v).ok());
}

TEST(AuthStore, RoundTripKeepsRecordsAndTheirOrder) {
  TempDir dir;
  fs::path path = dir.path() / "auth";
  {
    auto store = AuthStore::open(path.string());
    EXPECT_FALSE(store->imported());
    EXPECT_EQ(store->contents().size(), 0u);
    ASSERT_TRUE(store->import(sample(), "settings.json").ok());
    EXPECT_EQ(store->import(sample(), "settings.json").error().code, 409);
  }
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u) << "tokens in plaintext: the directory is the owner's only";
  auto store = AuthStore::open(path.string());
  EXPECT_TRUE(store->imported());
  EXPECT_EQ(store->contents(), sample());
  EXPECT_EQ(store->quarantined(), 0u);
}

TEST(AuthStore, ChangesAndRemovalsAreDurable) {
  TempDir dir;
  fs::path path = dir.path() / "auth";
  StoredAuth next = sample();
  {
    auto store = AuthStore::open(path.string());
    ASSERT_TRUE(store->import(sample(), "").ok());
    next.realms.erase("open");
    next.realms["team"]["require_acceptance"] = true;
    next.tokens.erase(1);  // t1 revoked
    next.tokens[1]["realm"] = "open2";  // t2 moved (rename_realm)
    next.tokens.push_back({{"token", "t3"}, {"realm", "team"}});
    next.management_tokens = json::array();
    ASSERT_TRUE(store->save(next).ok());
    EXPECT_EQ(store->contents(), next);
    // A token that comes back later is a new record, after the others.
    next.tokens.push_back({{"token", "t1"}, {"realm", "team"}});
    ASSERT_TRUE(store->save(next).ok());
  }
  auto store = AuthStore::open(path.string());
  EXPECT_EQ(store->contents(), next);
  EXPECT_FALSE(store->contents().realms.contains("open"));
  EXPECT_EQ(store->contents().tokens.back()["token"], "t1");
}

TEST(AuthStore, UnreadableRecordsAreQuarantinedNotFatal) {
  TempDir dir;
  fs::path path = dir.path() / "auth";
  ASSERT_TRUE(AuthStore::open(path.string())->import(sample(), "").ok());
  put_raw(path, {{"realm/broken", "{not json"},
                 {"realm/typed", R"({"required":"yes"})"},
                 {"token/zz", R"({"token":"x"})"},
                 {"token/00000000000000ff", R"({"token":5})"},
                 {"token/00000000000000fe", R"({"token":"t1","realm":"elsewhere"})"},  // t1 has a record already
                 {"mtoken/0000000000000100", R"({"token":"m2","max_ttl":0})"},
                 {"stray", "1"}});
  {
    auto store = AuthStore::open(path.string());
    EXPECT_EQ(store->quarantined(), 7u);
    EXPECT_EQ(store->contents(), sample());
  }
  auto store = AuthStore::open(path.string());
  EXPECT_EQ(store->quarantined(), 0u) << "moved aside once, not read again";
  EXPECT_EQ(store->contents(), sample());
}

TEST(AuthStore, RefusesWhatIsNotAnAuthStore) {
  TempDir dir;
  write(dir.path() / "tyo-mq-auth.sqlite", "SQLite format 3");
  EXPECT_THROW(AuthStore::open((dir.path() / "tyo-mq-auth.sqlite").string()), std::runtime_error);
  fs::create_directories(dir.path() / "other");
  write(dir.path() / "other" / "notes.txt", "mine");
  EXPECT_THROW(AuthStore::open((dir.path() / "other").string()), std::runtime_error);
  put_raw(dir.path() / "messages", {{"r0000", "{}"}});  // a RocksDB of another kind (the message store)
  try {
    AuthStore::open((dir.path() / "messages").string());
    ADD_FAILURE() << "opened";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("not a siomq auth store"), std::string::npos) << e.what();
  }
  EXPECT_THROW(auth_store_path(json{{"auth_store", 3}}), std::runtime_error);
  EXPECT_THROW(auth_store_path(json{{"auth_store", {{"filename", ""}}}}), std::runtime_error);
  EXPECT_EQ(auth_store_path(json{{"auth_store", {{"filename", "a"}}}}), "a");
  EXPECT_EQ(auth_store_path(json{{"auth_store", "b"}}), "b");
  EXPECT_EQ(auth_store_path(json::object()), std::nullopt);
}

TEST(AuthStore, BackupIsAConsistentStoreOfItsMoment) {
  TempDir dir;
  fs::path path = dir.path() / "auth", copy = dir.path() / "backup";
  auto store = AuthStore::open(path.string());
  ASSERT_TRUE(store->import(sample(), "").ok());
  ASSERT_TRUE(store->backup(copy.string()).ok());
  StoredAuth later = sample();
  later.tokens.erase(0);
  later.realms.erase("team");
  ASSERT_TRUE(store->save(later).ok());
  EXPECT_EQ(store->backup(copy.string()).error().code, 409);
  EXPECT_EQ(store->backup((dir.path() / "missing" / "b").string()).error().code, 400);
  auto restored = AuthStore::open(copy.string());
  EXPECT_TRUE(restored->imported());
  EXPECT_EQ(restored->contents(), sample());
  EXPECT_EQ(store->contents(), later);
}

// LiveSettings over the store: the file's part imported once and removed from the file; changes
// stored; nothing the file says later brings back what was removed.
TEST(AuthStore, LiveSettingsImportsOnceAndNeverResurrects) {
  TempDir dir;
  fs::path settings = dir.path() / "settings.json", store_dir = dir.path() / "auth";
  json file = {{"auth_store", {{"filename", store_dir.string()}}},
               {"auth",
                {{"enabled", true},
                 {"jwt_secret", "j"},
                 {"realms", sample().realms},
                 {"tokens", sample().tokens},
                 {"managementTokens", sample().management_tokens}}}};
  write(settings, file.dump());
  {
    LiveSettings live(file, settings.string(), {}, AuthStore::open(store_dir.string()));
    json on_disk = json::parse(read(settings));
    EXPECT_FALSE(holds_stored_part(on_disk)) << on_disk.dump();
    EXPECT_EQ(on_disk["auth"]["jwt_secret"], "j");
    EXPECT_TRUE(live.current().auth.realm("team"));
    EXPECT_EQ(live.current().auth.tokens.size(), 3u);
    EXPECT_EQ(live.current().auth.management_tokens.size(), 1u);
    // A store change leaves the file alone; a file change leaves the store alone.
    auto stamp = fs::last_write_time(settings);
    ASSERT_TRUE(live.update([](json& doc) -> Status {
      doc["auth"]["realms"].erase("open");
      auto& tokens = doc["auth"]["tokens"];
      tokens.erase(1);
      tokens.push_back({{"token", "t9"}, {"realm", "team"}});
      return Ok{};
    }).ok());
    EXPECT_EQ(fs::last_write_time(settings), stamp);
    ASSERT_TRUE(live.update([](json& doc) -> Status {
      doc["auth"]["jwt_secret"] = "k";
      return Ok{};
    }).ok());
    EXPECT_EQ(json::parse(read(settings))["auth"]["jwt_secret"], "k");
    EXPECT_FALSE(holds_stored_part(json::parse(read(settings))));
    // The file edited to bring back the removed realm and token: ignored on reload, and removed from it.
    json edited = json::parse(read(settings));
    edited["auth"]["realms"]["open"] = {{"required", false}};
    edited["auth"]["tokens"] = json::array({{{"token", "t1"}, {"realm", "team"}}});
    write(settings, edited.dump());
    ASSERT_TRUE(live.reload().ok());
    EXPECT_FALSE(live.current().auth.realm("open"));
    EXPECT_EQ(live.current().auth.tokens.size(), 3u);
    EXPECT_FALSE(holds_stored_part(json::parse(read(settings))));
  }
  // The restart: the file (now without realms and tokens) and the store.
  json again = json::parse(read(settings));
  again["auth"]["tokens"] = json::array({{{"token", "t1"}, {"realm", "team"}}});  // and edited while down
  write(settings, again.dump());
  LiveSettings live(again, settings.string(), {}, AuthStore::open(store_dir.string()));
  const AuthConfig& a = live.current().auth;
  EXPECT_EQ(a.jwt_secret, "k");
  EXPECT_FALSE(a.realm("open"));
  ASSERT_EQ(a.tokens.size(), 3u);
  for (const auto& t : a.tokens) EXPECT_NE(t.token, "t1");
  EXPECT_EQ(a.tokens.back().token, "t9");
  EXPECT_FALSE(holds_stored_part(json::parse(read(settings))));
  EXPECT_TRUE(live.backup_auth_store((dir.path() / "copy").string()).ok());
  LiveSettings without(json::object(), "");
  EXPECT_EQ(without.backup_auth_store((dir.path() / "copy2").string()).error().code, 400);
}

TEST(AuthStore, RepeatedTokensKeepTheFirst) {
  json doc = {{"auth",
               {{"tokens", json::array({{{"token", "a"}, {"realm", "r1"}}, {{"token", "a"}, {"realm", "r2"}},
                                       {{"token", "b"}}})}}}};
  StoredAuth part = take_stored_part(doc);
  ASSERT_EQ(part.tokens.size(), 2u);
  EXPECT_EQ(part.tokens[0]["realm"], "r1");
  EXPECT_FALSE(doc.contains("auth")) << "an auth block left empty goes";
}

}  // namespace
}  // namespace siomq::auth
