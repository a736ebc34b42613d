#include "wire/json_spans.h"

#include <gtest/gtest.h>

namespace siomq::json_spans {
namespace {

TEST(JsonSpans, ObjectMembersKeepTheRawValueText) {
  auto m = object_members(R"( { "event" : "e", "message":{"a":[1, 2,{"}":"]"}]} ,"n":1.50e3,"k\"q":null} )");
  ASSERT_TRUE(m.ok()) << m.error().message;
  ASSERT_EQ(m->size(), 4u);
  EXPECT_EQ((*m)[0].key, "event");
  EXPECT_EQ((*m)[0].value, R"("e")");
  EXPECT_EQ((*m)[1].key, "message");
  EXPECT_EQ((*m)[1].value, R"({"a":[1, 2,{"}":"]"}]})");
  EXPECT_EQ((*m)[2].value, "1.50e3");
  EXPECT_EQ((*m)[3].key, "k\"q");
  EXPECT_EQ((*m)[3].value, "null");
}

TEST(JsonSpans, DuplicatesAndEmptyContainers) {
  auto m = object_members(R"({"a":1,"a":2})");
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->size(), 2u);
  EXPECT_TRUE(object_members("{}")->empty());
  EXPECT_TRUE(array_elements(" [ ] ")->empty());
}

TEST(JsonSpans, ArrayElements) {
  auto a = array_elements(R"(["PRODUCE", {"x":"a\"]b"} , [ ], "s", -1e-3, true])");
  ASSERT_TRUE(a.ok());
  ASSERT_EQ(a->size(), 6u);
  EXPECT_EQ((*a)[0], R"("PRODUCE")");
  EXPECT_EQ((*a)[1], R"({"x":"a\"]b"})");
  EXPECT_EQ((*a)[2], "[ ]");
  EXPECT_EQ((*a)[4], "-1e-3");
  EXPECT_EQ((*a)[5], "true");
}

TEST(JsonSpans, MalformedTextIsAnErrorNotACrash) {
  for (const char* bad : {"", "{", "[", R"({"a")", R"({"a":})", R"({"a":1,})", R"({a:1})", R"(["unterminated)",
                          "[1 2]", "]", R"({"a":1]})", "[[[", R"("\)"}) {
    EXPECT_FALSE(array_elements(bad).ok() && object_members(bad).ok()) << bad;
  }
  EXPECT_FALSE(value_end("   ").ok());
  EXPECT_FALSE(value_end("]").ok());
}

TEST(JsonSpans, ValueEnd) {
  EXPECT_EQ(*value_end(R"(  "a,b" , 1)"), 7u);
  EXPECT_EQ(*value_end("123,4"), 3u);
  EXPECT_EQ(*value_end(R"({"a":[{}]}x)"), 10u);
}

TEST(JsonSpans, ABackslashRunEscapesTheQuoteOnlyWhenOdd) {
  EXPECT_EQ(*value_end(R"("a\\"x)"), 5u);        // "a\\" then x: the quote ends the string
  EXPECT_EQ(*value_end(R"("a\\\"b"x)"), 8u);    // "a\\\"b": an escaped quote inside
  EXPECT_EQ(*value_end(R"("\"\\"x)"), 6u);      // an escaped quote, then a run of two
  EXPECT_EQ(*value_end(R"("\\\\"x)"), 6u);
  EXPECT_FALSE(value_end(R"("abc\")").ok());       // the only quote after the start is escaped
  auto m = object_members(R"({"k\\":"v\\\"w","z":1})");
  ASSERT_TRUE(m.ok());
  ASSERT_EQ(m->size(), 2u);
  EXPECT_EQ((*m)[0].key, "k\\");
  EXPECT_EQ((*m)[0].value, R"("v\\\"w")");
  EXPECT_EQ((*m)[1].value, "1");
}

TEST(Unescape, AsJsonParseDoes) {
  EXPECT_EQ(*unescape(R"("a\"b\\c\/d\b\f\n\r\t")"), "a\"b\\c/d\b\f\n\r\t");
  EXPECT_EQ(*unescape(R"("\u00e9\u20ac")"), "\xc3\xa9\xe2\x82\xac");
  EXPECT_EQ(*unescape(R"("\ud83d\ude00")"), "\xf0\x9f\x98\x80");
  EXPECT_EQ(*unescape(R"("\ud83d")"), "\xed\xa0\xbd");  // a lone surrogate, kept
  EXPECT_EQ(*unescape("\"raw \xc3\xa9\""), "raw \xc3\xa9");
  EXPECT_FALSE(unescape(R"("\x")").ok());
  EXPECT_FALSE(unescape(R"("\u12")").ok());
  EXPECT_FALSE(unescape(R"("\")").ok());
  EXPECT_FALSE(unescape("abc").ok());
}

}  // namespace
}  // namespace siomq::json_spans
