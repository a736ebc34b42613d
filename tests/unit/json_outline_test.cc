#include "wire/json_outline.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "wire/js_json.h"
#include "wire/json_spans.h"

namespace siomq::json {
namespace {

// The one-pass validator must take exactly what js::validate (simdjson, numbers tamed) takes.
void expect_agrees(const std::string& text) {
  const bool reference = js::validate(text).ok();
  Outline outline;
  EXPECT_EQ(validate(text, &outline).ok(), reference) << "text: " << text;
  EXPECT_EQ(validate(text).ok(), reference) << "text (no outline): " << text;
}

TEST(JsonOutline, AcceptsWhatJsValidateAcceptsAndNothingElse) {
  const std::vector<std::string> cases = {
      "1", " 1", "1 ", "\t\n\r 1 \t", "-0", "-0.0e-0", "0e5", "1E5", "1.5e+3", "123456789012345678901234567890",
      "1e400", "-1e400", "[1e999999]", "1.7976931348623157e309",
      // overflow with a small exponent (found by review: js::validate refused them, JSON.parse takes them)
      "1000000000e300", "-10000000000e299", "[12345678901234567890123456789012345e280]", "-200000000.0e300", "true", "false", "null", "[]", "{}", "[ ]",
      "{ }", R"("\/")", R"("\u0000")", R"("\uD834\uDD1E")", R"("\uDBFF\uDFFF")", "\"a\x7f\"",
      R"({"a":1,"a":2})", R"([1,[2,[3,{"x":[]}]],"s"])", R"(["PRODUCE",{"event":"e","message":{"k":[1,"]"]}}])",
      // refused
      "", " ", "\xef\xbb\xbf" "1", "\f1", "\"a\x01\"", "[1,]", R"({"a":1,})", "-", "01", "-01", "1.", ".1", "1e",
      "1e+", "+1", "tru", "truex", "nul", "nan", "Infinity", R"("\x")", R"("\u00zz")", R"("\u00")", R"("\ud800")",
      R"("\udc00")", R"("\ud800\u0041")", R"("\ud800\ud800")", R"("\ud800")" "x", std::string("1\0", 2),
      std::string("\0", 1), "[1]x", "[1] 2", "\"\xc0\x80\"", "\"\xed\xa0\x80\"", "\x80", "[-]", R"({"a"})",
      R"({1:2})", R"(["a" "b"])", R"({"a":1 "b":2})", "[", "]", "{", "}", R"({"a":)", R"(["a",)", "\"abc",
      R"("abc\")", "[1}", R"({"a":1])", R"({"a" 1})", "[1,,2]", "[,1]", "1 1", "{,}", "[\"a\"\n,\n]",
  };
  for (const auto& text : cases) expect_agrees(text);
}

std::string nested(size_t depth, bool objects, bool scalar) {
  std::string s;
  for (size_t i = 0; i < depth; ++i) s += objects ? "{\"a\":" : "[";
  if (scalar) s += "1";
  else if (objects) s += "{}";
  for (size_t i = 0; i < depth; ++i) s += objects ? "}" : "]";
  return s;
}

TEST(JsonOutline, TheDepthLimitIsJsValidatesToTheLevel) {
  for (size_t depth : {1000u, 1022u, 1023u, 1024u, 1025u, 2000u}) {
    for (bool objects : {false, true}) {
      for (bool scalar : {false, true}) expect_agrees(nested(depth, objects, scalar));
    }
  }
  // An empty array at level 1024 is in; a value inside it is one level too deep.
  EXPECT_TRUE(validate(std::string(1024, '[') + std::string(1024, ']')).ok());
  EXPECT_FALSE(validate(std::string(1024, '[') + "1" + std::string(1024, ']')).ok());
}

TEST(JsonOutline, NotesTheRootArraysElementsAndTheirMembers) {
  const std::string text = R"( [ "PRODUCE" , { "event" : "e", "message":{"a":[1,"}"]}, "k\"q" : null } , [1,{"x":2}] , 7 ] )";
  Outline o;
  ASSERT_TRUE(validate(text, &o).ok());
  ASSERT_TRUE(o.root_is_array());
  ASSERT_EQ(o.size(), 4u);
  auto elements = json_spans::array_elements(text);
  ASSERT_TRUE(elements.ok());
  for (size_t i = 0; i < 4; ++i) EXPECT_EQ(o.element(text, i), (*elements)[i]);
  EXPECT_EQ(o.element(text, 4), "");
  auto members = o.members_of(text, o.element(text, 1));
  ASSERT_TRUE(members.has_value());
  auto scanned = json_spans::object_members(o.element(text, 1));
  ASSERT_TRUE(scanned.ok());
  ASSERT_EQ(members->size(), scanned->size());
  EXPECT_EQ((*members)[0].key(text), "\"event\"");
  EXPECT_EQ((*members)[0].value(text), "\"e\"");
  EXPECT_EQ((*members)[1].value(text), R"({"a":[1,"}"]})");
  EXPECT_FALSE((*members)[1].key_escaped);
  EXPECT_EQ((*members)[2].key(text), R"("k\"q")");
  EXPECT_TRUE((*members)[2].key_escaped);
  EXPECT_EQ((*members)[2].value(text), "null");
  // Not objects, or not elements of this text: nothing noted.
  EXPECT_FALSE(o.members_of(text, o.element(text, 0)).has_value());
  EXPECT_FALSE(o.members_of(text, o.element(text, 2)).has_value());
  const std::string element_copy(o.element(text, 1));
  EXPECT_FALSE(o.members_of(text, element_copy).has_value());
  EXPECT_FALSE(o.members_of(text, o.element(text, 1).substr(1)).has_value());
  // A copy of the text reads the same (a packet's text moves to its handler); another text reads nothing.
  const std::string copy = text;
  EXPECT_EQ(o.element(copy, 1), o.element(text, 1));
  EXPECT_EQ(o.element(copy, 1).data(), copy.data() + (o.element(text, 1).data() - text.data()));
  EXPECT_TRUE(o.members_of(copy, o.element(copy, 1)).has_value());
  EXPECT_EQ(o.element(text + " ", 1), "");
  EXPECT_FALSE(o.members_of(text + " ", o.element(text, 1)).has_value());
  // A text that failed leaves an outline that describes nothing.
  EXPECT_FALSE(validate(text + "x", &o).ok());
  EXPECT_EQ(o.element(text + "x", 1), "");
}

TEST(JsonOutline, ElementsAndMembersBeyondWhatItKeepsAreLeftToTheReaders) {
  std::string text = "[";
  for (size_t i = 0; i < Outline::kElements + 3; ++i) text += i ? ",{\"a\":1}" : "{\"a\":1}";
  text += "]";
  Outline o;
  ASSERT_TRUE(validate(text, &o).ok());
  EXPECT_EQ(o.size(), Outline::kElements + 3);
  EXPECT_EQ(o.element(text, Outline::kElements - 1), "{\"a\":1}");
  EXPECT_EQ(o.element(text, Outline::kElements), "");

  std::string many = "[\"E\",{";
  for (size_t i = 0; i <= Outline::kMembers; ++i) many += (i ? ",\"k" : "\"k") + std::to_string(i) + "\":1";
  many += "},{\"after\":true}]";
  ASSERT_TRUE(validate(many, &o).ok());
  EXPECT_FALSE(o.members_of(many, o.element(many, 1)).has_value());
  EXPECT_FALSE(o.members_of(many, o.element(many, 2)).has_value());  // the pool was used up by element 1
  EXPECT_EQ(o.element(many, 2), "{\"after\":true}");
}

TEST(JsonOutline, ARootThatIsNoArrayHasNoElements) {
  Outline o;
  ASSERT_TRUE(validate(R"({"a":[1,2]})", &o).ok());
  EXPECT_FALSE(o.root_is_array());
  EXPECT_EQ(o.size(), 0u);
  ASSERT_TRUE(validate("\"s\"", &o).ok());
  EXPECT_EQ(o.size(), 0u);
  ASSERT_TRUE(validate("[]", &o).ok());
  EXPECT_TRUE(o.root_is_array());
  EXPECT_EQ(o.size(), 0u);
}

}  // namespace
}  // namespace siomq::json
