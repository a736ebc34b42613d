// broker::SeqLog: a std::map<uint64_t, V> for growing seqs, with tombstones and compaction.
#include "broker/seq_log.h"

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <string>
#include <vector>

namespace siomq::broker {
namespace {

std::vector<uint64_t> seqs_after(const SeqLog<std::string>& log, uint64_t after) {
  std::vector<uint64_t> out;
  log.each_after(after, [&out](uint64_t seq, const std::string&) {
    out.push_back(seq);
    return true;
  });
  return out;
}

TEST(SeqLog, AppendFindEraseAndTheEndsStayLive) {
  SeqLog<std::string> log;
  EXPECT_TRUE(log.empty());
  for (uint64_t seq = 10; seq <= 15; ++seq) log.put(seq, "m" + std::to_string(seq));
  EXPECT_EQ(log.size(), 6u);
  ASSERT_NE(log.find(12), nullptr);
  EXPECT_EQ(*log.find(12), "m12");
  EXPECT_EQ(log.find(9), nullptr);
  EXPECT_EQ(log.find(16), nullptr);

  EXPECT_TRUE(log.erase(12));
  EXPECT_FALSE(log.erase(12));  // gone already
  EXPECT_EQ(log.find(12), nullptr);
  EXPECT_EQ(log.size(), 5u);
  EXPECT_EQ(seqs_after(log, 10), (std::vector<uint64_t>{11, 13, 14, 15}));

  // The ends: erasing the first and the last leaves live values there.
  EXPECT_TRUE(log.erase(10));
  EXPECT_TRUE(log.erase(11));
  EXPECT_EQ(log.first_seq(), 13u);
  EXPECT_EQ(log.first(), "m13");
  EXPECT_TRUE(log.erase(15));
  EXPECT_EQ(log.last_seq(), 14u);
  EXPECT_EQ(log.last(), "m14");
  EXPECT_TRUE(log.erase(13));
  EXPECT_TRUE(log.erase(14));
  EXPECT_TRUE(log.empty());
  EXPECT_EQ(seqs_after(log, 0), std::vector<uint64_t>{});
}

TEST(SeqLog, OutOfOrderPutsLandInPlaceAndReplace) {
  SeqLog<std::string> log;
  log.put(5, "a");
  log.put(3, "b");
  log.put(4, "c");
  log.put(4, "d");  // replaces
  EXPECT_EQ(log.size(), 3u);
  EXPECT_EQ(seqs_after(log, 0), (std::vector<uint64_t>{3, 4, 5}));
  EXPECT_EQ(*log.find(4), "d");
  EXPECT_EQ(seqs_after(log, UINT64_MAX), std::vector<uint64_t>{});
}

TEST(SeqLog, CountAfterWithAndWithoutTombstones) {
  SeqLog<std::string> log;
  for (uint64_t seq = 1; seq <= 10; ++seq) log.put(seq, "x");
  log.erase(1);  // the front: no tombstone
  EXPECT_EQ(log.count_after(0), 9u);
  EXPECT_EQ(log.count_after(5), 5u);
  log.erase(7);  // a tombstone
  EXPECT_EQ(log.count_after(5), 4u);
  EXPECT_EQ(log.count_after(10), 0u);
  EXPECT_EQ(log.count_after(UINT64_MAX), 0u);
}

TEST(SeqLog, NewestFirstAndEarlyStop) {
  SeqLog<std::string> log;
  for (uint64_t seq = 1; seq <= 5; ++seq) log.put(seq, "x");
  log.erase(4);
  std::vector<uint64_t> seen;
  log.each_newest_first([&seen](uint64_t seq, const std::string&) {
    seen.push_back(seq);
    return seen.size() < 3;
  });
  EXPECT_EQ(seen, (std::vector<uint64_t>{5, 3, 2}));
}

// Against a std::map, through a long random mix of appends and erases anywhere: the same contents
// after every step, and the slots never more than about twice the live values.
TEST(SeqLog, MatchesAMapUnderRandomErasures) {
  std::mt19937_64 rng(12345);
  SeqLog<std::string> log;
  std::map<uint64_t, std::string> model;
  uint64_t next = 1;
  for (int step = 0; step < 20000; ++step) {
    if (model.empty() || rng() % 3 != 0) {
      log.put(next, std::to_string(next));
      model[next] = std::to_string(next);
      ++next;
    } else {
      auto it = model.begin();
      std::advance(it, static_cast<long>(rng() % model.size()));
      EXPECT_TRUE(log.erase(it->first));
      model.erase(it);
    }
    ASSERT_EQ(log.size(), model.size());
    ASSERT_LE(log.slots(), 2 * log.size() + 33);
    if (step % 101 == 0) {
      const uint64_t after = next > 1 ? rng() % next : 0;
      size_t want = static_cast<size_t>(std::distance(model.upper_bound(after), model.end()));
      ASSERT_EQ(log.count_after(after), want) << "after " << after;
    }
    if (step % 997 == 0 || model.size() < 4) {
      std::vector<uint64_t> want;
      for (const auto& [seq, v] : model) want.push_back(seq);
      ASSERT_EQ(seqs_after(log, 0), want);
      if (!model.empty()) {
        EXPECT_EQ(log.first_seq(), model.begin()->first);
        EXPECT_EQ(log.last_seq(), model.rbegin()->first);
      }
    }
  }
  // Keep the oldest, erase the rest: the tombstones go (from the back at once).
  uint64_t keep = log.first_seq();
  std::vector<uint64_t> all = seqs_after(log, 0);
  for (uint64_t seq : all) {
    if (seq != keep) log.erase(seq);
  }
  EXPECT_EQ(seqs_after(log, 0), std::vector<uint64_t>{keep});
  EXPECT_EQ(log.slots(), 1u);
}

}  // namespace
}  // namespace siomq::broker
