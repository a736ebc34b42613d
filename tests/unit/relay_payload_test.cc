#include "surfaces/remote/relay_payload.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "surfaces/remote/relay_sessions.h"

namespace siomq::remote {
namespace {

TEST(RelayPayload, OpaqueIsVerbatimWithItsAttachments) {
  std::vector<std::string> att{std::string("\x00\xff\x01", 3)};
  std::string json = R"(["multi",1,"two",{"_placeholder":true,"num":0},null])";
  auto p = relay_payload("multi", json, att, false, 1000);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->json, json);
  EXPECT_EQ(p->attachments, att);
  auto bare = relay_payload("bare", R"(["bare"])", {}, false, 1000);
  ASSERT_TRUE(bare);
  EXPECT_EQ(bare->json, R"(["bare",{}])");
  auto big = relay_payload("x", R"(["x","0123456789"])", att, false, 16);
  ASSERT_FALSE(big);
  EXPECT_EQ(big.error().code, 413);
}

TEST(RelayPayload, FramesFromBinaryBase64OrAnObjectsBinary) {
  std::vector<std::string> att{std::string("\xff\xd8\xff\xe0", 4)};
  const std::string expected_json = R"(["frame",{"_placeholder":true,"num":0}])";
  for (const char* json : {R"(["frame",{"_placeholder":true,"num":0}])", R"(["frame",{"frame":{"_placeholder":true,"num":0}}])",
                           R"(["frame",{"session_id":"s","frame":"/9j/4A=="},"ignored"])", R"(["frame",{"frame":"\/9j\/4A=="}])"}) {
    auto p = relay_payload("frame", json, att, true, 4);
    ASSERT_TRUE(p) << json << ": " << p.error().message;
    EXPECT_EQ(p->json, expected_json);
    ASSERT_EQ(p->attachments.size(), 1u);
    EXPECT_EQ(p->attachments[0], att[0]) << json;
  }
  EXPECT_EQ(relay_payload("frame", R"(["frame",{"_placeholder":true,"num":0}])", att, true, 3).error().code, 413);
  EXPECT_EQ(relay_payload("frame", R"(["frame",{"frame":"/9j/4A=="}])", {}, true, 3).error().code, 413);
  for (const char* bad : {R"(["frame"])", R"(["frame","text"])", R"(["frame",{"frame":"not base64!"}])", R"(["frame",{"frame":12}])",
                          R"(["frame",{"_placeholder":true,"num":1}])", R"(["frame",{}])"}) {
    auto p = relay_payload("frame", bad, att, true, 100);
    ASSERT_FALSE(p) << bad;
    EXPECT_EQ(p.error().code, 400) << bad;
  }
  // Base64 far longer than the cap is refused before it is decoded.
  std::string huge = R"(["frame",{"frame":")" + std::string(4000, 'A') + R"("}])";
  EXPECT_EQ(relay_payload("frame", huge, {}, true, 100).error().code, 413);
}

TEST(RelaySessions, BoundedPerSessionAndPerNamespaceRoomsDistinct) {
  RelayLimits l;
  l.max_sessions = 2;
  l.max_agents_per_session = 1;
  l.max_viewers_per_session = 2;
  RelaySessions s;
  SessionKey a{"/remote", "r", "a"}, b{"/remote", "r", "b"}, c{"/remote", "r", "c"};
  EXPECT_TRUE(s.join(a, Role::agent, l));
  EXPECT_FALSE(s.join(a, Role::agent, l));
  EXPECT_TRUE(s.join(a, Role::viewer, l));
  EXPECT_TRUE(s.join(a, Role::viewer, l));
  EXPECT_EQ(s.join(a, Role::viewer, l).error().code, 429);
  EXPECT_TRUE(s.join(b, Role::viewer, l));
  EXPECT_FALSE(s.join(c, Role::viewer, l)) << "two sessions at most";
  EXPECT_TRUE(s.join(SessionKey{"/chat", "r", "c"}, Role::viewer, l)) << "counted per namespace";
  s.leave(b, Role::viewer);
  EXPECT_TRUE(s.join(c, Role::viewer, l)) << "b ended with its last peer";
  EXPECT_EQ(s.sessions("/remote"), 2u);
  // Rooms: by realm, session and side; length prefixes keep "ab"+"c" from meeting "a"+"bc".
  EXPECT_NE(room_of({"/remote", "ab", "c"}, Role::agent), room_of({"/remote", "a", "bc"}, Role::agent));
  EXPECT_NE(room_of(a, Role::agent), room_of(a, Role::viewer));
  EXPECT_NE(room_of({"/remote", "r1", "s"}, Role::viewer), room_of({"/remote", "r2", "s"}, Role::viewer));
}

}  // namespace
}  // namespace siomq::remote
