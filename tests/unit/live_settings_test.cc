#include "auth/live_settings.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "auth/enrolment.h"
#include "auth/hmac.h"
#include "auth/limits.h"

namespace siomq::auth {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

class TempDir {
 public:
  TempDir() : path_(fs::temp_directory_path() / ("siomq-live-" + std::to_string(::getpid()) + "-" + std::to_string(counter_++))) {
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~TempDir() { fs::remove_all(path_); }
  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  static inline int counter_ = 0;
  fs::path path_;
};

std::string read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

void write(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

TEST(Limits, ParsedWithOverridesAndOffWithoutABlock) {
  EXPECT_FALSE(parse_limits(json::object()).enabled);
  auto l = parse_limits(json::parse(R"({"trust_proxy":true,"limits":{"messages_per_second":5,"max_connections_per_ip":-1,
      "realms":{"r":{"messages_per_second":50}}}})"));
  EXPECT_TRUE(l.enabled);
  EXPECT_TRUE(l.trust_proxy);
  EXPECT_EQ(l.for_realm("x").messages_per_second, 5);
  EXPECT_EQ(l.for_realm("x").max_connections_per_ip, 0);  // negative: unlimited
  EXPECT_EQ(l.for_realm("r").messages_per_second, 50);
  auto off = parse_limits(json::parse(R"({"limits":{"enabled":false,"messages_per_second":5}})"));
  EXPECT_EQ(off.for_realm("x").messages_per_second, 0);
  // Issue 12: the caps have safe defaults without a block; rates stay off; 0 in a block lifts a cap.
  const LimitValues& d = parse_limits(json::object()).for_realm("x");
  EXPECT_EQ(d.max_subscriptions_per_socket, 1000);
  EXPECT_EQ(d.max_registrations_per_socket, 100);
  EXPECT_EQ(d.credential_attempts_per_second, 10);
  EXPECT_EQ(d.messages_per_second, 0);
  EXPECT_EQ(parse_limits(json::parse(R"({"limits":{"max_subscriptions_per_socket":0}})")).for_realm("x").max_subscriptions_per_socket, 0);
  EXPECT_EQ(l.for_realm("x").max_subscriptions_per_socket, 1000) << "a block without the key keeps the default";
  EXPECT_THROW(parse_limits(json::parse(R"({"limits":{"messages_per_second":"5"}})")), std::runtime_error);
  EXPECT_THROW(parse_limits(json::parse(R"({"limits":{"realms":{"r":1}}})")), std::runtime_error);
}

TEST(TokenBucket, BurstThenRefillAndRetryAfter) {
  TokenBucket b;
  for (int i = 0; i < 6; ++i) EXPECT_EQ(b.take(1, 2, 6, 1000), 0) << i;
  EXPECT_EQ(b.take(1, 2, 6, 1000), 1);     // one token missing at 2/s: 1 s (at least 1)
  EXPECT_EQ(b.take(1, 2, 6, 1500), 0);     // half a second refilled one
  EXPECT_EQ(b.take(10, 2, 6, 1500), 5);    // 10 wanted, 0 there: ceil(10 / 2)
  EXPECT_EQ(b.take(1, 0, 0, 1500), 0);     // rate 0: unlimited
  TokenBucket full;
  EXPECT_EQ(full.take(1, 1, 3, 0), 0);
  EXPECT_EQ(full.take(1, 1, 3, 1'000'000), 0);  // refills up to the burst only
  EXPECT_EQ(full.take(1, 1, 3, 1'000'000), 0);
  EXPECT_EQ(full.take(1, 1, 3, 1'000'000), 0);
  EXPECT_GT(full.take(1, 1, 3, 1'000'000), 0);
}

TEST(LiveSettings, UpdateIsAtomicWrittenAndVisible) {
  TempDir dir;
  std::string path = dir.file("settings.json");
  write(path, R"({"auth":{"enabled":true}})");
  LiveSettings live(json::parse(read(path)), path);
  EXPECT_TRUE(live.current().auth.enabled);
  ASSERT_TRUE(live.update([](json& doc) -> Status {
    doc["auth"]["realms"]["r"] = {{"required", false}};
    return Ok{};
  }).ok());
  EXPECT_FALSE(live.current().auth.auth_required("r"));
  EXPECT_EQ(json::parse(read(path))["auth"]["realms"]["r"]["required"], false);
  // A change that fails, or yields a document that does not parse, changes nothing.
  auto failed = live.update([](json& doc) -> Status {
    doc["auth"]["enabled"] = false;
    return make_error("no", 409);
  });
  EXPECT_EQ(failed.error().code, 409);
  auto invalid = live.update([](json& doc) -> Status {
    doc["auth"]["enabled"] = "yes";
    return Ok{};
  });
  EXPECT_EQ(invalid.error().code, 400);
  EXPECT_TRUE(live.current().auth.enabled);
  EXPECT_EQ(json::parse(read(path))["auth"]["enabled"], true);
  for (const auto& entry : fs::directory_iterator(fs::path(path).parent_path()))
    EXPECT_EQ(entry.path().filename(), "settings.json");  // no temporary file left
}

TEST(LiveSettings, ReloadKeepsTheLastGoodSettingsAndNoticesChanges) {
  TempDir dir;
  std::string path = dir.file("settings.json");
  write(path, R"({"limits":{"messages_per_second":1}})");
  LiveSettings live(json::parse(read(path)), path, [](const json& doc) {
    if (doc.contains("transport") && !doc["transport"].is_object()) throw std::runtime_error("transport must be an object");
  });
  EXPECT_FALSE(live.reload_if_changed().has_value());
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  write(path, R"({"limits":{"messages_per_second":7}})");
  auto changed = live.reload_if_changed();
  ASSERT_TRUE(changed.has_value());
  EXPECT_TRUE(changed->ok());
  EXPECT_EQ(live.current().limits.for_realm("x").messages_per_second, 7);
  for (const char* broken : {"{ nope", "[]", R"({"transport":1})", R"({"idle_eviction":{"ttl_ms":0}})"}) {
    write(path, broken);
    auto s = live.reload();
    EXPECT_FALSE(s.ok()) << broken;
    EXPECT_EQ(s.error().code, 500);
    EXPECT_EQ(live.current().limits.for_realm("x").messages_per_second, 7) << broken;
  }
  LiveSettings memory(json::object(), "");
  EXPECT_EQ(memory.reload().error().code, 400);
  EXPECT_TRUE(memory.update([](json& doc) -> Status {
    doc["auth"]["enabled"] = true;
    return Ok{};
  }).ok());
  EXPECT_TRUE(memory.current().auth.enabled);
}

// Issue 12 item 16: the generated admin token goes into a 0600 file, never through a symlink; the
// settings file's temporary copy is 0600 too and never follows a link planted in its place.
TEST(LiveSettings, SecretsAreWrittenOnlyToPrivateFilesOfOurOwn) {
  TempDir dir;
  ::unsetenv("SIOMQ_TEST_ADMIN");
  std::string target = dir.file("elsewhere"), link = dir.file("linked.env");
  ASSERT_EQ(::symlink(target.c_str(), link.c_str()), 0);
  json doc = {{"auth", {{"enabled", true}, {"env_file", link}, {"admin_token_env", "SIOMQ_TEST_ADMIN"}}}};
  LiveSettings through_link(doc, "");
  EXPECT_THROW(through_link.bootstrap_admin_token(), std::runtime_error);
  struct stat st {};
  EXPECT_NE(::stat(target.c_str(), &st), 0) << "nothing was written through the link";
  std::string env = dir.file("plain.env");
  doc["auth"]["env_file"] = env;
  LiveSettings plain(doc, "");
  plain.bootstrap_admin_token();
  ASSERT_EQ(::stat(env.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  std::string settings = dir.file("settings.json");
  ASSERT_TRUE(write_file_atomically(settings, "{}").ok());
  ASSERT_EQ(::stat(settings.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
}

TEST(LiveSettings, AdminTokenBootstrap) {
  TempDir dir;
  std::string env = dir.file("admin.env");
  ::unsetenv("SIOMQ_TEST_ADMIN");
  json doc = {{"auth", {{"enabled", true}, {"env_file", env}, {"admin_token_env", "SIOMQ_TEST_ADMIN"}}}};
  {
    LiveSettings live(doc, "");
    std::string line = live.bootstrap_admin_token();
    EXPECT_NE(line.find("new random token"), std::string::npos) << line;
    EXPECT_TRUE(live.current().auth.has_admin_token());
    std::string text = read(env);
    ASSERT_EQ(text.rfind("SIOMQ_TEST_ADMIN=", 0), 0u);
    EXPECT_EQ(text.size(), std::string("SIOMQ_TEST_ADMIN=").size() + 64 + 1);
    EXPECT_FALSE(live.document().dump().find(text.substr(17, 64)) != std::string::npos);  // not in the document
  }
  {
    LiveSettings live(doc, "");  // the second start reads it back
    EXPECT_NE(live.bootstrap_admin_token().find(env), std::string::npos);
    std::string generated = read(env).substr(17, 64);
    bool found = false;
    for (const auto& t : live.current().auth.tokens) found = found || (t.token == generated && t.realm == "*" && t.role == "admin");
    EXPECT_TRUE(found);
  }
  ::setenv("SIOMQ_TEST_ADMIN", "from-env", 1);
  LiveSettings env_first(doc, "");
  EXPECT_NE(env_first.bootstrap_admin_token().find("environment"), std::string::npos);
  ::unsetenv("SIOMQ_TEST_ADMIN");
  doc["auth"]["tokens"] = json::array({{{"token", "t"}, {"realm", "*"}, {"role", "admin"}}});
  LiveSettings has(doc, "");
  EXPECT_EQ(has.bootstrap_admin_token(), "");
  LiveSettings off(json{{"auth", {{"enabled", false}}}}, "");
  EXPECT_EQ(off.bootstrap_admin_token(), "");
}

TEST(Enrolment, SupersedeLimitDecideAndPublicShape) {
  Enrolment e;
  auto req = [](const char* client, const char* realm = "r") {
    AuthorizationRequest r;
    r.request_id = std::string("id-") + client + "-" + realm;
    r.realm = realm;
    r.role = "both";
    r.client_id = client;
    r.client_name = "n";
    r.client_token = "secret-token";
    return r;
  };
  ASSERT_TRUE(e.submit(req("a"), 2, 1000).ok());
  ASSERT_TRUE(e.submit(req("b"), 2, 1001).ok());
  EXPECT_EQ(e.submit(req("c"), 2, 1002).error().code, 429);
  auto again = req("a");
  again.request_id = "id-a-2";
  ASSERT_TRUE(e.submit(again, 2, 1003).ok());  // supersedes id-a-r, so it fits
  EXPECT_EQ(e.pending_count(), 2u);
  EXPECT_EQ(e.next(std::nullopt)->request_id, "id-b-r");  // the oldest pending
  EXPECT_FALSE(e.next(std::string("other")).has_value());
  EXPECT_EQ(e.decide("id-a-r", true, "both", std::nullopt, 2000).error().code, 404);  // superseded
  auto d = e.decide("id-b-r", false, "both", "no", 2000);
  ASSERT_TRUE(d.ok());
  json pub = public_request(*d);
  EXPECT_EQ(pub["status"], "rejected");
  EXPECT_EQ(pub["decision_reason"], "no");
  EXPECT_EQ(pub["client_token_hash"], sha256_hex("secret-token"));
  EXPECT_EQ(pub.dump().find("secret-token"), std::string::npos);
  EXPECT_EQ(pub["created_at"], "1970-01-01T00:00:01.001Z");
  e.remove_realm("r");
  EXPECT_EQ(e.pending_count(), 0u);
}

// An anonymous client re-filing under one client_id, or under many, can make the server hold only
// what the pending caps allow: superseded and decided requests are not kept.
TEST(Enrolment, WhatIsHeldIsBoundedByThePendingCaps) {
  Enrolment e;
  auto req = [](const std::string& client, const std::string& realm) {
    AuthorizationRequest r;
    r.request_id = "id-" + client + "-" + realm;
    r.realm = realm;
    r.client_id = client;
    r.challenge_response_json = std::string(4000, '1');
    return r;
  };
  for (int i = 0; i < 10000; ++i) ASSERT_TRUE(e.submit(req("same", "r"), 0, i).ok());
  EXPECT_EQ(e.pending_count(), 1u) << "superseded requests are dropped, not kept for an hour";
  for (size_t i = 1; i < kMaxPendingPerRealm; ++i) ASSERT_TRUE(e.submit(req(std::to_string(i), "r"), 0, 1).ok());
  EXPECT_EQ(e.submit(req("one-more", "r"), 0, 1).error().code, 429) << "per realm";
  ASSERT_TRUE(e.submit(req("x", "other-realm"), 0, 1).ok()) << "another realm is not crowded out";
  for (size_t r = 0; e.pending_count() < kDefaultMaxPending; ++r)
    for (size_t i = 0; i < kMaxPendingPerRealm && e.pending_count() < kDefaultMaxPending; ++i)
      ASSERT_TRUE(e.submit(req(std::to_string(i), "realm-" + std::to_string(r)), 0, 1).ok());
  EXPECT_EQ(e.submit(req("late", "fresh-realm"), 0, 1).error().code, 429) << "the server-wide default";
  ASSERT_TRUE(e.decide("id-x-other-realm", true, "both", std::nullopt, 2).ok());
  EXPECT_EQ(e.pending_count(), kDefaultMaxPending - 1) << "a decided request is not kept";
}

}  // namespace
}  // namespace siomq::auth
