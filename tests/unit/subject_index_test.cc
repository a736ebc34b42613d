#include "broker/subject_index.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

namespace siomq::broker {
namespace {

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    size_t end = s.find(sep, start);
    if (end == std::string::npos) {
      out.push_back(s.substr(start));
      return out;
    }
    out.push_back(s.substr(start, end - start));
    start = end + 1;
  }
}

// tyo-mq §4.4, written as the reference states it: equality, else level by level.
bool naive_mqtt(const std::string& pattern, const std::string& topic) {
  if (pattern == topic) return true;
  auto p = split(pattern, '/');
  auto t = split(topic, '/');
  for (size_t i = 0; i < p.size(); ++i) {
    if (p[i] == "#") return i == p.size() - 1;
    if (i >= t.size()) return false;
    if (p[i] == "+") continue;
    if (p[i] != t[i]) return false;
  }
  return p.size() == t.size();
}

// NATS: "*" one token, final ">" one or more tokens. A ">" elsewhere is not a valid NATS pattern (the bus
// refuses it); the index treats it as the MQTT rule does, matching by equality only.
bool naive_nats(const std::string& pattern, const std::string& subject) {
  auto p = split(pattern, '.');
  for (size_t i = 0; i + 1 < p.size(); ++i) {
    if (p[i] == ">") return pattern == subject;
  }
  auto s = split(subject, '.');
  for (size_t i = 0; i < p.size(); ++i) {
    if (p[i] == ">" && i == p.size() - 1) return s.size() > i;
    if (i >= s.size()) return false;
    if (p[i] == "*") continue;
    if (p[i] != s[i]) return false;
  }
  return p.size() == s.size();
}

std::vector<SubjectIndex::Id> matches(const SubjectIndex& index, const std::string& subject) {
  std::vector<SubjectIndex::Id> out;
  index.match(subject, out);
  std::sort(out.begin(), out.end());
  return out;
}

TEST(SubjectIndexMqtt, EdgeCasesOfTheReference) {
  SubjectIndex index(kMqttSyntax);
  index.insert("a/#", 1);
  index.insert("a/+/c", 2);
  index.insert("+", 3);
  index.insert("a+", 4);
  index.insert("a/#/c", 5);
  index.insert("#", 6);
  EXPECT_EQ(matches(index, "a"), (std::vector<SubjectIndex::Id>{1, 3, 6}));      // a/# matches its parent
  EXPECT_EQ(matches(index, "a//c"), (std::vector<SubjectIndex::Id>{1, 2, 6}));   // + matches an empty level
  EXPECT_EQ(matches(index, "a+"), (std::vector<SubjectIndex::Id>{3, 4, 6}));     // a+ is literal
  EXPECT_EQ(matches(index, "ab"), (std::vector<SubjectIndex::Id>{3, 6}));
  EXPECT_EQ(matches(index, "a/#/c"), (std::vector<SubjectIndex::Id>{1, 2, 5, 6}));  // non-final # by equality only
  EXPECT_EQ(matches(index, "a/x/c"), (std::vector<SubjectIndex::Id>{1, 2, 6}));
  EXPECT_EQ(matches(index, ""), (std::vector<SubjectIndex::Id>{3, 6}));
}

TEST(SubjectIndexNats, GreaterThanNeedsAToken) {
  SubjectIndex index(kNatsSyntax);
  index.insert("orders.>", 1);
  index.insert("orders.*", 2);
  index.insert("orders", 3);
  index.insert("*.created", 4);
  EXPECT_EQ(matches(index, "orders"), (std::vector<SubjectIndex::Id>{3}));
  EXPECT_EQ(matches(index, "orders.created"), (std::vector<SubjectIndex::Id>{1, 2, 4}));
  EXPECT_EQ(matches(index, "orders.eu.created"), (std::vector<SubjectIndex::Id>{1}));
}

TEST(SubjectIndex, InsertIsIdempotentAndEraseRemovesExactlyThePair) {
  SubjectIndex index(kMqttSyntax);
  index.insert("a/b", 1);
  index.insert("a/b", 1);
  index.insert("a/b", 2);
  index.insert("a/#/b", 3);
  EXPECT_EQ(index.size(), 3u);
  EXPECT_FALSE(index.erase("a/b", 9));
  EXPECT_FALSE(index.erase("a/c", 1));
  EXPECT_TRUE(index.erase("a/b", 1));
  EXPECT_FALSE(index.erase("a/b", 1));
  EXPECT_EQ(matches(index, "a/b"), (std::vector<SubjectIndex::Id>{2}));
  EXPECT_TRUE(index.erase("a/b", 2));
  EXPECT_TRUE(index.erase("a/#/b", 3));
  EXPECT_TRUE(index.empty());
  EXPECT_TRUE(matches(index, "a/b").empty());
}

// Random patterns and subjects over a small alphabet, so that collisions and wildcards are frequent;
// every match is compared with the naive matcher, with inserts and erases interleaved.
template <class Naive>
void randomized(SubjectSyntax syntax, Naive naive, std::vector<std::string> level_pool, bool allow_empty) {
  std::mt19937 rng(12345);
  auto pick = [&](size_t n) { return std::uniform_int_distribution<size_t>(0, n - 1)(rng); };
  std::vector<std::string> wildcard_pool = level_pool;
  wildcard_pool.emplace_back(syntax.single);
  wildcard_pool.emplace_back(syntax.single);
  wildcard_pool.emplace_back(syntax.multi);
  auto make = [&](const std::vector<std::string>& pool) {
    size_t n = 1 + pick(4);
    std::string s;
    for (size_t i = 0; i < n; ++i) {
      if (i) s.push_back(syntax.separator);
      std::string level = pool[pick(pool.size())];
      if (level.empty() && !allow_empty) level = "x";
      s += level;
    }
    return s;
  };
  SubjectIndex index(syntax);
  std::vector<std::pair<std::string, SubjectIndex::Id>> live;
  for (int round = 0; round < 3000; ++round) {
    if (live.empty() || pick(3) != 0) {
      std::string p = make(wildcard_pool);
      SubjectIndex::Id id = round;
      index.insert(p, id);
      live.emplace_back(p, id);
    } else {
      size_t k = pick(live.size());
      ASSERT_TRUE(index.erase(live[k].first, live[k].second));
      live.erase(live.begin() + static_cast<long>(k));
    }
    ASSERT_EQ(index.size(), live.size());
    for (int q = 0; q < 5; ++q) {
      std::string subject = make(q == 0 ? wildcard_pool : level_pool);
      std::vector<SubjectIndex::Id> expected;
      for (const auto& [p, id] : live) {
        if (naive(p, subject)) expected.push_back(id);
      }
      std::sort(expected.begin(), expected.end());
      ASSERT_EQ(matches(index, subject), expected) << "subject '" << subject << "'";
    }
  }
}

TEST(SubjectIndexMqtt, AgreesWithTheNaiveMatcher) {
  randomized(kMqttSyntax, naive_mqtt, {"a", "b", "c", "", "a+", "##"}, true);
}

TEST(SubjectIndexNats, AgreesWithTheNaiveMatcher) { randomized(kNatsSyntax, naive_nats, {"a", "b", "c", "a*"}, false); }

}  // namespace
}  // namespace siomq::broker
