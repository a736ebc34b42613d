#include "wire/js_json.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

namespace siomq::js {
namespace {

// Every expected string below is what Node.js prints for JSON.stringify of the same value.

TEST(JsNumber, FormatsLikeNumberToString) {
  EXPECT_EQ(number(0), "0");
  EXPECT_EQ(number(-0.0), "0");
  EXPECT_EQ(number(1), "1");
  EXPECT_EQ(number(-1), "-1");
  EXPECT_EQ(number(0.1), "0.1");
  EXPECT_EQ(number(1.5), "1.5");
  EXPECT_EQ(number(0.5), "0.5");
  EXPECT_EQ(number(100), "100");
  EXPECT_EQ(number(12345.678), "12345.678");
  EXPECT_EQ(number(123456789012), "123456789012");
}

TEST(JsNumber, SwitchesToExponentAtTheSameThresholdsAsJavaScript) {
  EXPECT_EQ(number(1e20), "100000000000000000000");
  EXPECT_EQ(number(1e21), "1e+21");
  EXPECT_EQ(number(0.000001), "0.000001");
  EXPECT_EQ(number(0.000001234), "0.000001234");
  EXPECT_EQ(number(1e-7), "1e-7");
  EXPECT_EQ(number(123e-20), "1.23e-18");
  EXPECT_EQ(number(-1.25e-10), "-1.25e-10");
}

TEST(JsNumber, ExtremesAndNonFiniteValues) {
  EXPECT_EQ(number(5e-324), "5e-324");
  EXPECT_EQ(number(1.7976931348623157e308), "1.7976931348623157e+308");
  EXPECT_EQ(number(9007199254740992.0), "9007199254740992");
  EXPECT_EQ(number(std::numeric_limits<double>::quiet_NaN()), "null");
  EXPECT_EQ(number(std::numeric_limits<double>::infinity()), "null");
  EXPECT_EQ(number(-std::numeric_limits<double>::infinity()), "null");
}

TEST(JsArrayIndex, AcceptsCanonicalIndicesBelowTwoToThe32MinusOne) {
  EXPECT_TRUE(is_array_index("0"));
  EXPECT_TRUE(is_array_index("10"));
  EXPECT_TRUE(is_array_index("4294967294"));
  EXPECT_FALSE(is_array_index("4294967295"));
  EXPECT_FALSE(is_array_index("99999999999"));
  EXPECT_FALSE(is_array_index(""));
  EXPECT_FALSE(is_array_index("01"));
  EXPECT_FALSE(is_array_index("-1"));
  EXPECT_FALSE(is_array_index("1.0"));
  EXPECT_FALSE(is_array_index("a"));
}

TEST(JsNormalize, OrdersIndexKeysFirstThenInsertionOrderWithLastDuplicateWinning) {
  // JSON.stringify(JSON.parse('{"b":1,"2":2,"a":3,"1":4,"b":5,"10":6,"01":7,"4294967295":8,"4294967294":9}'))
  auto r = normalize(R"({"b":1,"2":2,"a":3,"1":4,"b":5,"10":6,"01":7,"4294967295":8,"4294967294":9})");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, R"({"1":4,"2":2,"10":6,"4294967294":9,"b":5,"a":3,"01":7,"4294967295":8})");
}

TEST(JsNormalize, RewritesNumbersAsJavaScriptDoes) {
  auto r = normalize("[1.0,1e2,-0,0.0,1E-7,18446744073709551615,-9223372036854775808,9007199254740993]");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, "[1,100,0,0,1e-7,18446744073709552000,-9223372036854776000,9007199254740992]");
}

TEST(JsNormalize, DropsWhitespaceAndReescapesStrings) {
  auto r = normalize(" { \"k\" : [ \"\\u0001\\ud83d\\ude00\\/\" , true , null , { } , [ ] ] } ");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, "{\"k\":[\"\\u0001\xf0\x9f\x98\x80/\",true,null,{},[]]}");
}

TEST(JsNormalize, IsIdempotent) {
  const char* inputs[] = {R"({"z":{"3":[1.50,"x"],"1":null},"a":-0.0})", R"([[[]],{"":""}])", R"("s")", "42"};
  for (const char* in : inputs) {
    auto once = normalize(in);
    ASSERT_TRUE(once.ok()) << in;
    auto twice = normalize(*once);
    ASSERT_TRUE(twice.ok()) << *once;
    EXPECT_EQ(*twice, *once);
  }
}

TEST(JsNormalize, RejectsInvalidJson) {
  EXPECT_FALSE(normalize("").ok());
  EXPECT_FALSE(normalize("{").ok());
  EXPECT_FALSE(normalize("[1,]").ok());
  EXPECT_FALSE(normalize("{'a':1}").ok());
  EXPECT_FALSE(normalize("NaN").ok());
  EXPECT_FALSE(normalize("[\"\xff\"]").ok());
}

}  // namespace
}  // namespace siomq::js

namespace siomq::js {
namespace {

// JSON.parse takes numbers of any size; simdjson holds 64 bits. These are what Node prints for
// JSON.stringify(JSON.parse(x)).
TEST(Normalize, NumbersBeyond64BitsBehaveAsInJavaScript) {
  EXPECT_EQ(*normalize("[100000000000000000000]"), "[100000000000000000000]");
  EXPECT_EQ(*normalize("[80000050000000001e3]"), "[80000050000000010000]");
  EXPECT_EQ(*normalize("[-18446744073709551617]"), "[-18446744073709552000]");
  EXPECT_EQ(*normalize(R"({"a":1e400,"b":-1e400,"c":1e-400})"), R"({"a":null,"b":null,"c":0})");
  EXPECT_EQ(*normalize("[\"1e400\",1e400]"), "[\"1e400\",null]");
  // Overflow with an exponent of at most 300 (found by review: refused before, JSON.parse takes it).
  EXPECT_EQ(*normalize("[1000000000e300,-10000000000e299,2e300]"), "[null,null,2e+300]");
  EXPECT_TRUE(validate("{\"message\":12345678901234567890123456789012345e280}").ok());
  // Idempotent: the output parses back to itself.
  auto once = *normalize("[80000050000000001e3]");
  EXPECT_EQ(*normalize(once), once);
}

TEST(TameNumbers, RewritesOnlyWhatSimdjsonCannotHold) {
  EXPECT_FALSE(tame_numbers("[1,2.5,-3e10]"));
  EXPECT_FALSE(tame_numbers("[01234567890123456789]"));  // malformed: a leading zero
  EXPECT_FALSE(tame_numbers("[\"unterminated"));
  auto t = tame_numbers("[\"99999999999999999999\",99999999999999999999]");
  ASSERT_TRUE(t);
  EXPECT_EQ(t->substr(0, 24), "[\"99999999999999999999\",");
}

TEST(Base36, AsNumberToString36) {
  EXPECT_EQ(js::base36(0), "0");
  EXPECT_EQ(js::base36(35), "z");
  EXPECT_EQ(js::base36(36), "10");
  EXPECT_EQ(js::base36(1764000000000), "midc1z40");  // (1764000000000).toString(36) in Node
}

}  // namespace
}  // namespace siomq::js
