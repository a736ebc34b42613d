// The bus's subject rules (wire/bus_subject.h) and the per-realm core interest (broker/sublist.h).
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "broker/sublist.h"
#include "wire/bus_subject.h"

namespace siomq {
namespace {

TEST(BusSubject, PublishSubjectsHaveNoWildcardsEmptyTokensOrWhitespace) {
  EXPECT_EQ(bus::subject_error("a.b.c"), nullptr);
  EXPECT_EQ(bus::subject_error("a*.b>"), nullptr) << "only whole tokens are wildcards";
  for (const char* bad : {"", "a..b", ".a", "a.", "a b", "a\tb", "a.*", "a.>", "*", ">"})
    EXPECT_NE(bus::subject_error(bad), nullptr) << bad;
  EXPECT_EQ(bus::subject_error(std::string(1024, 'a')), nullptr);
  EXPECT_NE(bus::subject_error(std::string(1025, 'a')), nullptr);
}

TEST(BusSubject, PatternsMayEndWithGreaterThanOnly) {
  EXPECT_EQ(bus::pattern_error("a.*.c"), nullptr);
  EXPECT_EQ(bus::pattern_error("a.>"), nullptr);
  EXPECT_EQ(bus::pattern_error(">"), nullptr);
  EXPECT_NE(bus::pattern_error("a.>.c"), nullptr);
  EXPECT_NE(bus::pattern_error("a..>"), nullptr);
}

TEST(BusSubject, MatchingFollowsNats) {
  EXPECT_TRUE(bus::subject_matches("a.*", "a.b"));
  EXPECT_FALSE(bus::subject_matches("a.*", "a.b.c"));
  EXPECT_FALSE(bus::subject_matches("a.*", "a"));
  EXPECT_TRUE(bus::subject_matches("a.>", "a.b.c"));
  EXPECT_FALSE(bus::subject_matches("a.>", "a"));
  EXPECT_TRUE(bus::subject_matches(">", "x"));
  EXPECT_TRUE(bus::subject_matches("a.b", "a.b"));
  EXPECT_FALSE(bus::subject_matches("a.b", "a.bc"));
}

TEST(BusSubject, OverlapIsSomeSubjectMatchingBoth) {
  EXPECT_TRUE(bus::patterns_overlap("a.*.c", "a.b.*"));
  EXPECT_TRUE(bus::patterns_overlap("a.>", "a.b"));
  EXPECT_TRUE(bus::patterns_overlap("*.b", "a.>"));
  EXPECT_FALSE(bus::patterns_overlap("a.>", "a"));
  EXPECT_FALSE(bus::patterns_overlap("a.*", "a.b.c"));
  EXPECT_FALSE(bus::patterns_overlap("a.b", "a.c"));
  EXPECT_TRUE(bus::pattern_covers("a.>", "a.*.c"));
  EXPECT_FALSE(bus::pattern_covers("a.*", "a.>"));
  EXPECT_FALSE(bus::pattern_covers("a.b", "a.*"));
}

struct Recorder : broker::BusSink {
  std::vector<std::pair<std::string, std::string>> got;  // (sid, subject)
  std::vector<std::string> last;                         // sids delivered with `last`
  void deliver(const broker::BusMessagePtr& m, std::string_view sid, bool is_last) override {
    got.emplace_back(std::string(sid), m->subject);
    if (is_last) last.emplace_back(sid);
  }
};

// Routes and delivers, as the surfaces do (the delivery after the lock is released).
struct Published {
  broker::Sublist& list;
  size_t publish(std::string subject) {
    auto m = std::make_shared<broker::BusMessage>();
    m->subject = std::move(subject);
    std::vector<broker::Sublist::Copy> copies;
    size_t n = list.route(m->subject, copies);
    broker::deliver(copies, m);
    return n;
  }
};

TEST(Sublist, PlainSubscriptionsEachGetACopy) {
  broker::Sublist list;
  Published bus{list};
  auto r = std::make_shared<Recorder>();
  list.add("a.*", "", r, "1");
  list.add("a.>", "", r, "2");
  list.add("b", "", r, "3");
  EXPECT_EQ(bus.publish(("a.x")), 2u);
  EXPECT_EQ(bus.publish(("a.x.y")), 1u);
  EXPECT_EQ(bus.publish(("c")), 0u);
  EXPECT_TRUE(list.has_interest("b"));
  EXPECT_FALSE(list.has_interest("c"));
}

TEST(Sublist, AQueueGroupGetsOneCopySpreadEvenly) {
  broker::Sublist list;
  Published bus{list};
  auto r = std::make_shared<Recorder>();
  for (const char* sid : {"1", "2", "3"}) list.add("w.*", "g", r, sid);
  list.add("w.*", "other", r, "4");
  list.add("w.>", "g", r, "5");  // another pattern: another group
  for (int i = 0; i < 300; ++i) EXPECT_EQ(bus.publish(("w.x")), 3u);
  std::map<std::string, int> counts;
  for (const auto& [sid, subject] : r->got) ++counts[sid];
  EXPECT_EQ(counts["1"], 100);
  EXPECT_EQ(counts["2"], 100);
  EXPECT_EQ(counts["3"], 100);
  EXPECT_EQ(counts["4"], 300);
  EXPECT_EQ(counts["5"], 300);
}

TEST(Sublist, MaxRemovesTheSubscriptionAfterThatManyMessages) {
  broker::Sublist list;
  Published bus{list};
  auto r = std::make_shared<Recorder>();
  auto id = list.add("a", "", r, "1");
  auto group_member = list.add("a", "g", r, "2");
  ASSERT_TRUE(list.set_max(id, 2));
  ASSERT_TRUE(list.set_max(group_member, 1));
  for (int i = 0; i < 4; ++i) bus.publish(("a"));
  EXPECT_EQ(r->got.size(), 3u);
  EXPECT_EQ(r->last, (std::vector<std::string>{"2", "1"}));
  EXPECT_TRUE(list.empty());
  EXPECT_FALSE(list.remove(id));
  EXPECT_FALSE(list.set_max(id, 1));
  auto now = list.add("a", "", r, "3");
  EXPECT_TRUE(list.set_max(now, 0));
  EXPECT_TRUE(list.empty());
}

TEST(Sublist, RemovingTheLastMemberRemovesTheGroup) {
  broker::Sublist list;
  Published bus{list};
  auto r = std::make_shared<Recorder>();
  auto a = list.add("q", "g", r, "1");
  auto b = list.add("q", "g", r, "2");
  EXPECT_TRUE(list.remove(a));
  EXPECT_EQ(bus.publish(("q")), 1u);
  EXPECT_TRUE(list.remove(b));
  EXPECT_FALSE(list.has_interest("q"));
  EXPECT_EQ(list.size(), 0u);
}

}  // namespace
}  // namespace siomq
