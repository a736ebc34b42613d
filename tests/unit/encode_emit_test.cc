#include <gtest/gtest.h>

#include "net/socket.h"

namespace siomq::net {
namespace {

// encode_emit writes in one string what encode_event writes from an already built array.
TEST(EncodeEmit, SameBytesAsEncodingTheArray) {
  struct Case {
    std::string nsp, event, args, array;
  };
  for (const Case& c : {Case{"/", "CONSUME-p-e", R"({"event":"e","message":1})", R"(["CONSUME-p-e",{"event":"e","message":1}])"},
                        Case{"/", "say \"hi\"", "", R"(["say \"hi\""])"},
                        Case{"/admin", "x", R"(1,"two",[3])", R"(["x",1,"two",[3]])"}}) {
    auto a = encode_emit(c.nsp, c.event, c.args, {});
    auto b = encode_event(c.nsp, std::nullopt, false, c.array, {});
    ASSERT_EQ(a.size(), 1u);
    EXPECT_EQ(*a[0].bytes, *b[0].bytes) << c.array;
    EXPECT_FALSE(a[0].binary);
  }
  auto a = encode_emit("/", "blob", R"({"_placeholder":true,"num":0})", {"\x01\x02"});
  auto b = encode_event("/", std::nullopt, false, R"(["blob",{"_placeholder":true,"num":0}])", {"\x01\x02"});
  ASSERT_EQ(a.size(), 2u);
  EXPECT_EQ(*a[0].bytes, "451-[\"blob\",{\"_placeholder\":true,\"num\":0}]");
  EXPECT_EQ(*a[0].bytes, *b[0].bytes);
  EXPECT_TRUE(a[1].binary);
  EXPECT_EQ(*a[1].bytes, "\x01\x02");
}

}  // namespace
}  // namespace siomq::net
