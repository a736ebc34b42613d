#include "wire/base64.h"

#include <gtest/gtest.h>

#include <string>

namespace siomq::base64 {
namespace {

using namespace std::string_literals;

TEST(Base64, EncodesRfc4648Vectors) {
  EXPECT_EQ(encode(""), "");
  EXPECT_EQ(encode("f"), "Zg==");
  EXPECT_EQ(encode("fo"), "Zm8=");
  EXPECT_EQ(encode("foo"), "Zm9v");
  EXPECT_EQ(encode("foob"), "Zm9vYg==");
  EXPECT_EQ(encode("fooba"), "Zm9vYmE=");
  EXPECT_EQ(encode("foobar"), "Zm9vYmFy");
}

TEST(Base64, EncodesHighBytesWithStandardAlphabet) {
  // Node: Buffer.from([0x00,0xff,0x10,0x61,0x62,0x63]).toString("base64")
  EXPECT_EQ(encode("\x00\xff\x10" "abc"s), "AP8QYWJj");
  EXPECT_EQ(encode("\xfb\xff"s), "+/8=");
}

TEST(Base64, EncodeAppendKeepsPrefix) {
  std::string out = "b";
  encode_append(out, "foo");
  EXPECT_EQ(out, "bZm9v");
}

TEST(Base64, EncodedSizeMatchesEncode) {
  for (size_t n = 0; n < 20; ++n) EXPECT_EQ(encoded_size(n), encode(std::string(n, 'x')).size()) << n;
}

TEST(Base64, DecodesRfc4648Vectors) {
  EXPECT_EQ(decode(""), "");
  EXPECT_EQ(decode("Zg=="), "f");
  EXPECT_EQ(decode("Zm8="), "fo");
  EXPECT_EQ(decode("Zm9v"), "foo");
  EXPECT_EQ(decode("Zm9vYg=="), "foob");
  EXPECT_EQ(decode("Zm9vYmE="), "fooba");
  EXPECT_EQ(decode("Zm9vYmFy"), "foobar");
  EXPECT_EQ(decode("AP8QYWJj"), "\x00\xff\x10" "abc"s);
}

TEST(Base64, RoundTripsEveryByteValueAndLength) {
  std::string all;
  for (int i = 0; i < 256; ++i) all.push_back(static_cast<char>(i));
  for (size_t n = 0; n <= all.size(); ++n) {
    std::string in = all.substr(0, n);
    auto out = decode(encode(in));
    ASSERT_TRUE(out.has_value()) << n;
    EXPECT_EQ(*out, in) << n;
  }
}

TEST(Base64, RejectsLengthNotMultipleOfFour) {
  EXPECT_FALSE(decode("Z"));
  EXPECT_FALSE(decode("Zg"));
  EXPECT_FALSE(decode("Zg="));
  EXPECT_FALSE(decode("Zm9vY"));
}

TEST(Base64, RejectsCharactersOutsideTheAlphabet) {
  EXPECT_FALSE(decode("Zm9*"));
  EXPECT_FALSE(decode("Zm9-"));  // base64url is not accepted
  EXPECT_FALSE(decode("Zm9_"));
  EXPECT_FALSE(decode("Zm 9"));
  EXPECT_FALSE(decode("Zm9\n"));
  EXPECT_FALSE(decode("Zm9\x80"));
  EXPECT_FALSE(decode("Zm9\0"s));
}

TEST(Base64, RejectsMisplacedPadding) {
  EXPECT_FALSE(decode("===="));
  EXPECT_FALSE(decode("Z==="));
  EXPECT_FALSE(decode("Z=g="));
  EXPECT_FALSE(decode("=Zg="));
  EXPECT_FALSE(decode("Zg==Zm9v"));  // padding before the last quantum
  EXPECT_FALSE(decode("Zg==Zg=="));  // ... even when the last quantum is padded as well
  EXPECT_FALSE(decode("Zm8=Zm8="));
  EXPECT_FALSE(decode("Zm=v"));
}

}  // namespace
}  // namespace siomq::base64
