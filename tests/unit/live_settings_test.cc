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

TEST(LiveSettings, ChangesAreReportedAndAClusterDocumentIsAdoptedWithoutThisNodesOwnBlocks) {
  TempDir dir;
  std::string path = dir.file("settings.json");
  write(path, R"({"auth":{"enabled":true},"cluster":{"enabled":true,"node_id":"me"},"tls":{"cert":"a","key":"b"}})");
  LiveSettings live(json::parse(read(path)), path);
  std::vector<json> reported;
  live.on_changed([&](const json& doc) { reported.push_back(doc); });
  ASSERT_TRUE(live.update([](json& doc) -> Status {
    doc["auth"]["realms"]["r"] = {{"required", false}};
    return Ok{};
  }).ok());
  ASSERT_EQ(reported.size(), 1u);
  EXPECT_EQ(reported[0]["auth"]["realms"]["r"]["required"], false);
  // Another node's document: taken whole, except this node's cluster and tls blocks; not reported back.
  ASSERT_TRUE(live.adopt(json::parse(R"({"auth":{"enabled":false},"cluster":{"enabled":true,"node_id":"other"},
      "limits":{"max_connections_per_ip":7}})")).ok());
  EXPECT_EQ(reported.size(), 1u);
  EXPECT_FALSE(live.current().auth.enabled);
  json file = json::parse(read(path));
  EXPECT_EQ(file["cluster"]["node_id"], "me");
  EXPECT_EQ(file["tls"]["cert"], "a");
  EXPECT_EQ(file["limits"]["max_connections_per_ip"], 7);
  EXPECT_FALSE(file["auth"]["enabled"]);
  // One that does not parse changes nothing.
  EXPECT_EQ(live.adopt(json::parse(R"({"auth":{"enabled":"sometimes"}})")).error().code, 400);
  EXPECT_EQ(live.adopt(json::array()).error().code, 400);
  EXPECT_FALSE(live.current().auth.enabled);
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

}  // namespace
}  // namespace siomq::auth
