// The key directory (broker/key_directory.h) and its values (broker/directory_values.h): caps, replace,
// the one-time pool, refusals that change nothing, failed writes undone, and the round trip through
// the store (memory and file; redis when SIOMQ_TEST_REDIS_URL names one).
#include <gtest/gtest.h>

#include <future>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "broker/key_directory.h"
#include "store/writer.h"
#include "temp_store.h"

namespace siomq::broker {
namespace {

using store::SyncMode;
using store::Writer;

Status publish(KeyDirectory& d, const std::string& realm, const std::string& identity, PublicKey key) {
  std::promise<Status> p;
  d.publish_key(realm, identity, std::move(key), [&](const Status& s) { p.set_value(s); });
  return p.get_future().get();
}

std::vector<PublicKey> lookup(KeyDirectory& d, const std::string& realm, const std::string& identity) {
  std::promise<std::vector<PublicKey>> p;
  d.lookup_keys(realm, identity, [&](std::vector<PublicKey> k) { p.set_value(std::move(k)); });
  return p.get_future().get();
}

Result<size_t> publish_bundle(KeyDirectory& d, const std::string& realm, const std::string& identity, PrekeyBundle b) {
  std::promise<Result<size_t>> p;
  d.publish_prekeys(realm, identity, std::move(b), [&](const Result<size_t>& r) { p.set_value(r); });
  return p.get_future().get();
}

Result<std::optional<TakenBundle>> take(KeyDirectory& d, const std::string& realm, const std::string& identity) {
  std::promise<Result<std::optional<TakenBundle>>> p;
  d.take_prekeys(realm, identity, [&](const Result<std::optional<TakenBundle>>& r) { p.set_value(r); });
  return p.get_future().get();
}

PublicKey key(std::string id, std::string pk = "UFVC") { return {std::move(id), "x25519", std::move(pk), 0}; }

PrekeyBundle bundle(std::vector<uint64_t> ids) {
  PrekeyBundle b;
  b.registration_id = 4242;
  b.device_id = 1;
  b.identity_key = "SUQ=";
  b.signed_prekey_id = 7;
  b.signed_prekey = "U1BL";
  b.signed_prekey_sig = "U0lH";
  b.kyber_prekey_id = 9;
  b.kyber_prekey = "S1lC";
  b.kyber_prekey_sig = "S1NJRw";
  for (uint64_t id : ids) b.one_time.push_back({id, "T1RQ" + std::to_string(id)});
  return b;
}

// A writer over `backend`, stopped before the directory that uses it goes.
struct Fixture {
  explicit Fixture(store::Backend& backend, KeyDirectoryLimits limits = {})
      : writer(std::make_unique<Writer>(backend, SyncMode::always, std::chrono::microseconds(0))), keys(*writer, limits) {}
  ~Fixture() { writer->stop(); }
  std::unique_ptr<Writer> writer;
  KeyDirectory keys;
};

TEST(KeyDirectory, PublishLookupReplaceAndTheEightKeyCap) {
  auto backend = store::open_memory();
  Fixture f(*backend);
  EXPECT_TRUE(lookup(f.keys, "r", "alice").empty());
  ASSERT_TRUE(publish(f.keys, "r", "alice", key("k0", "T0xE")));
  ASSERT_TRUE(publish(f.keys, "r", "alice", key("k0", "TkVX")));  // replaces
  auto keys = lookup(f.keys, "r", "alice");
  ASSERT_EQ(keys.size(), 1u);
  EXPECT_EQ(keys[0].public_key, "TkVX");
  EXPECT_GT(keys[0].updated_ms, 0);
  for (int i = 1; i < 8; ++i) ASSERT_TRUE(publish(f.keys, "r", "alice", key("k" + std::to_string(i))));
  auto refused = publish(f.keys, "r", "alice", key("k8"));
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, 429);
  EXPECT_EQ(lookup(f.keys, "r", "alice").size(), 8u);
  EXPECT_TRUE(publish(f.keys, "r", "alice", key("k7", "Uk9U")));  // replacing at the cap is fine
  // Per realm: the same identity elsewhere is someone else.
  EXPECT_TRUE(lookup(f.keys, "other", "alice").empty());
  // A realm name the store cannot key.
  EXPECT_EQ(publish(f.keys, std::string("a\0b", 3), "alice", key("k")).error().code, 400);
}

Status replace(KeyDirectory& d, const std::string& realm, const std::string& identity, std::vector<PublicKey> keys) {
  std::promise<Status> p;
  d.replace_keys(realm, identity, std::move(keys), [&](const Status& s) { p.set_value(s); });
  return p.get_future().get();
}

TEST(KeyDirectory, ReplaceTakesAClustersKeySetWholeWithItsTimes) {
  auto backend = store::open_memory();
  Fixture f(*backend);
  ASSERT_TRUE(publish(f.keys, "r", "alice", key("mine")));
  PublicKey a = key("a"), b = key("b");
  a.updated_ms = 1'800'000'000'000;
  b.updated_ms = 1'800'000'000'001;
  ASSERT_TRUE(replace(f.keys, "r", "alice", {a, b}));
  EXPECT_EQ(lookup(f.keys, "r", "alice"), (std::vector<PublicKey>{a, b}));
  ASSERT_TRUE(replace(f.keys, "r", "alice", {a, b}));  // the same again: nothing to write
  EXPECT_EQ(replace(f.keys, "r", "alice", {}).error().code, 400);
  EXPECT_EQ(replace(f.keys, "r", "alice", std::vector<PublicKey>(9, a)).error().code, 400);
  EXPECT_EQ(lookup(f.keys, "r", "alice"), (std::vector<PublicKey>{a, b}));
}

TEST(KeyDirectory, TakeConsumesOnePrekeyEachTimeThenServesTheBundleAlone) {
  auto backend = store::open_memory();
  Fixture f(*backend);
  auto none = take(f.keys, "r", "alice");
  ASSERT_TRUE(none);
  EXPECT_FALSE(*none);
  ASSERT_EQ(*publish_bundle(f.keys, "r", "alice", bundle({1, 2})), 2u);
  auto t1 = take(f.keys, "r", "alice");
  ASSERT_TRUE(t1 && *t1 && (*t1)->one_time);
  EXPECT_EQ((*t1)->one_time->id, 1u);
  EXPECT_EQ((*t1)->remaining, 1u);
  EXPECT_TRUE((*t1)->bundle.one_time.empty());
  EXPECT_EQ((*t1)->bundle.kyber_prekey, "S1lC");
  EXPECT_EQ((*take(f.keys, "r", "alice"))->one_time->id, 2u);
  auto empty = take(f.keys, "r", "alice");
  EXPECT_FALSE((*empty)->one_time);
  EXPECT_EQ((*empty)->remaining, 0u);
  EXPECT_EQ((*empty)->bundle.identity_key, "SUQ=");
  EXPECT_FALSE(*take(f.keys, "other", "alice"));
}

TEST(KeyDirectory, RepublishReplacesReusedIdsAndDropsTheOldestPastTheCap) {
  auto backend = store::open_memory();
  Fixture f(*backend, {8, 5, 100, 1 << 20});
  ASSERT_EQ(*publish_bundle(f.keys, "r", "a", bundle({1, 2, 3})), 3u);
  auto b = bundle({2, 4, 5, 6});
  b.one_time[0].key = "TkVXMg";
  ASSERT_EQ(*publish_bundle(f.keys, "r", "a", b), 5u);  // 1, 3, 2', 4, 5, 6 → the oldest (1) goes
  std::vector<uint64_t> order;
  for (;;) {
    auto t = take(f.keys, "r", "a");
    if (!(*t)->one_time) break;
    if ((*t)->one_time->id == 2) {
      EXPECT_EQ((*t)->one_time->key, "TkVXMg");
    }
    order.push_back((*t)->one_time->id);
  }
  EXPECT_EQ(order, (std::vector<uint64_t>{3, 2, 4, 5, 6}));
}

TEST(KeyDirectory, EntriesPerRealmAndBytesAreBounded) {
  auto backend = store::open_memory();
  Fixture f(*backend, {8, 100, 2, 1 << 20});
  ASSERT_TRUE(publish(f.keys, "r", "a", key("k")));
  ASSERT_TRUE(publish_bundle(f.keys, "r", "a", bundle({1})));
  EXPECT_EQ(publish(f.keys, "r", "b", key("k")).error().code, 507);
  EXPECT_EQ(publish_bundle(f.keys, "r", "b", bundle({})).error().code, 507);
  EXPECT_TRUE(publish(f.keys, "r", "a", key("k2")));  // an existing entry may change
  EXPECT_TRUE(publish(f.keys, "s", "b", key("k")));   // another realm has room
  EXPECT_TRUE(lookup(f.keys, "r", "b").empty());

  Fixture small(*backend, {8, 100, 100, 2000});
  ASSERT_TRUE(publish(small.keys, "r", "a", key("k", std::string(1000, 'A'))));
  auto full = publish(small.keys, "r", "b", key("k", std::string(1000, 'A')));
  EXPECT_EQ(full.error().code, 507);
  EXPECT_EQ(small.keys.stats().entries, 1u);
}

// A backend whose writes fail: the directory must undo what it could not store.
class FailingBackend final : public store::Backend {
 public:
  const char* name() const override { return "failing"; }
  Contents load() override { return {}; }
  Status write(const std::vector<store::Op>& ops, bool) override {
    if (ops.empty()) return Ok{};
    return make_error("disk on fire", 500);
  }
};

TEST(KeyDirectory, AFailedWriteIsUndoneAndReported) {
  FailingBackend backend;
  Fixture f(backend);
  auto s = publish(f.keys, "r", "a", key("k"));
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().code, 500);
  EXPECT_TRUE(lookup(f.keys, "r", "a").empty());
  EXPECT_FALSE(publish_bundle(f.keys, "r", "a", bundle({1})));
  EXPECT_FALSE(*take(f.keys, "r", "a"));
  EXPECT_EQ(f.keys.stats().entries, 0u);
  EXPECT_EQ(f.keys.stats().bytes, 0u);
}

TEST(KeyDirectory, AStoppedWriterRefusesAtOnceWithoutDeadlock) {
  auto backend = store::open_memory();
  Fixture f(*backend);
  ASSERT_TRUE(publish(f.keys, "r", "a", key("k")));
  f.writer->stop();
  auto s = publish(f.keys, "r", "a", key("k2"));
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().code, 503);
  EXPECT_EQ(lookup(f.keys, "r", "a").size(), 1u);
  EXPECT_FALSE(publish_bundle(f.keys, "r", "b", bundle({1})));
  std::promise<Status> purged;
  f.keys.purge_realm("r", [&](const Status& st) { purged.set_value(st); });
  EXPECT_FALSE(purged.get_future().get());
}

TEST(DirectoryValues, BundleFieldsAreCheckedAndRoundTrip) {
  auto b = bundle({1, 2});
  b.updated_ms = 1234;
  auto back = read_bundle(encode_bundle(b), true);
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(*back, b);
  EXPECT_EQ(read_bundle(encode_bundle(b), false)->updated_ms, 0);  // a client's time is not read
  auto no_kyber = read_bundle(R"({"identity_key":"SUQ","signed_prekey":"UA","signed_prekey_sig":"Uw"})", false);
  ASSERT_FALSE(no_kyber);
  EXPECT_NE(no_kyber.error().message.find("kyber_prekey is required"), std::string::npos);
  EXPECT_FALSE(read_bundle("[]", false));
  EXPECT_FALSE(read_bundle(R"({"kyber_prekey":"S","kyber_prekey_sig":"S","identity_key":"I","signed_prekey":"P",)"
                           R"("signed_prekey_sig":"G","registration_id":01})",
                           false));
  EXPECT_TRUE(check_base64("QUJD", 4, "f"));
  EXPECT_TRUE(check_base64("QUI=", 4, "f"));
  EXPECT_TRUE(check_base64("a-_b", 4, "f"));
  EXPECT_FALSE(check_base64("QUJDR", 4, "f"));
  EXPECT_FALSE(check_base64("", 4, "f"));
  EXPECT_FALSE(check_base64("Q===", 4, "f"));
  EXPECT_FALSE(check_base64("Q U", 4, "f"));
  EXPECT_EQ(js_length("abc"), 3u);
  EXPECT_EQ(js_length("\xc3\xa9"), 1u);          // é
  EXPECT_EQ(js_length("\xf0\x9f\x98\x80"), 2u);  // an emoji: a surrogate pair

  std::vector<PublicKey> keys{{"k1", "", "UA", 5}, {"k2", "x25519", "Ug", 6}};
  auto decoded = decode_keys(encode_keys(keys));
  ASSERT_TRUE(decoded);
  EXPECT_EQ(*decoded, keys);
  EXPECT_FALSE(decode_keys(R"({"keys":[{"key_id":"k","public_key":"not base64"}]})"));
}

// Publishes, takes, and checks what a fresh directory loads back from `backend`.
void round_trip(store::Backend& backend, const std::function<std::unique_ptr<store::Backend>()>& reopen) {
  {
    Fixture f(backend);
    ASSERT_TRUE(publish(f.keys, "r", "alice", key("k1", "S0VZ")));
    ASSERT_TRUE(publish_bundle(f.keys, "r", "alice", bundle({1, 2, 3})));
    ASSERT_TRUE(publish(f.keys, "gone", "bob", key("k1")));
    ASSERT_EQ((*take(f.keys, "r", "alice"))->one_time->id, 1u);
    std::promise<Status> purged;
    f.keys.purge_realm("gone", [&](const Status& s) { purged.set_value(s); });
    ASSERT_TRUE(purged.get_future().get());
  }
  auto again = reopen();
  auto contents = again->load();
  Fixture f(*again);
  EXPECT_TRUE(f.keys.load(contents.directory).empty());
  auto keys = lookup(f.keys, "r", "alice");
  ASSERT_EQ(keys.size(), 1u);
  EXPECT_EQ(keys[0].public_key, "S0VZ");
  EXPECT_EQ(keys[0].alg, "x25519");
  auto t = take(f.keys, "r", "alice");
  EXPECT_EQ((*t)->one_time->id, 2u);  // 1 stays consumed
  EXPECT_EQ((*t)->bundle.signed_prekey, "U1BL");
  EXPECT_FALSE(f.keys.has_realm("gone"));

  // move_along hands every entry over, under the directory's lock.
  std::vector<store::Op> moved;
  f.keys.move_along({}, [&](std::vector<store::Op> ops) { moved = std::move(ops); });
  EXPECT_EQ(moved.size(), 2u);
}

TEST(KeyDirectory, MemoryKeepsNothingAcrossARestart) {
  auto backend = store::open_memory();
  {
    Fixture f(*backend);
    ASSERT_TRUE(publish(f.keys, "r", "alice", key("k1")));
  }
  EXPECT_TRUE(backend->load().directory.empty());
}

TEST(KeyDirectory, FileStoreRoundTrip) {
  store::TempDir dir;
  auto path = (dir.path() / "data").string();
  auto backend = store::open_file(path);
  round_trip(*backend, [&] {
    backend.reset();
    return store::open_file(path);
  });
}

TEST(KeyDirectory, RedisStoreRoundTrip) {
  if (!store::redis_url()) GTEST_SKIP() << "SIOMQ_TEST_REDIS_URL is not set";
  auto prefix = store::unique_prefix();
  auto backend = store::open_redis(store::redis_url(), prefix);
  round_trip(*backend, [&] { return store::open_redis(store::redis_url(), prefix); });
  auto cleanup = store::open_redis(store::redis_url(), prefix);
  EXPECT_TRUE(store::erase_everything(*cleanup));
}

TEST(KeyDirectory, AnEntryThatCannotBeReadIsQuarantinedAndOtherDirectoriesAreLeftAlone) {
  auto backend = store::open_memory();
  Fixture f(*backend);
  std::vector<store::DirectoryEntry> entries{
      {"e2ee", "r", "alice", R"({"keys":[{"key_id":"k","public_key":"UA","updated_at":1}]})", 1},
      {"e2ee", "r", "broken", R"({"keys":"no"})", 1},
      {"prekeys", "r", "nokyber", R"({"identity_key":"SQ","signed_prekey":"UA","signed_prekey_sig":"Uw"})", 1},
      {"auth", "r", "x", R"({"anything":true})", 1},
  };
  auto aside = f.keys.load(entries);
  ASSERT_EQ(aside.size(), 2u);
  EXPECT_EQ(aside[0].kind, store::Op::Kind::quarantine);
  EXPECT_EQ(lookup(f.keys, "r", "alice").size(), 1u);
  EXPECT_EQ(f.keys.stats().entries, 1u);
}

}  // namespace
}  // namespace siomq::broker
