#include "surfaces/remote/relay_payload.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>


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

}  // namespace
}  // namespace siomq::remote
