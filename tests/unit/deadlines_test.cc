// The engine's timer machinery (broker/deadlines.h) on a real io_context: order, cancel and reschedule,
// a callback that schedules again, and the bound on what a busy key leaves behind in the heap.
#include "broker/deadlines.h"

#include <gtest/gtest.h>

#include <chrono>
#include <utility>
#include <vector>

namespace siomq::broker {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

class DeadlinesTest : public ::testing::Test {
 protected:
  // Runs the io_context until nothing is scheduled (or a second has passed).
  void run() {
    auto until = Clock::now() + 1s;
    while (deadlines_.size() && Clock::now() < until) io_.run_for(5ms);
    io_.run_for(5ms);
  }

  boost::asio::io_context io_;
  std::vector<int> fired_;
  Deadlines<int> deadlines_{io_, [this](int key) { fired_.push_back(key); }};
};

TEST_F(DeadlinesTest, KeysFireInTimeOrderTiesByKey) {
  auto now = Clock::now();
  deadlines_.schedule(3, now + 20ms);
  deadlines_.schedule(2, now + 10ms);
  deadlines_.schedule(5, now + 10ms);
  deadlines_.schedule(1, now + 30ms);
  run();
  EXPECT_EQ(fired_, (std::vector<int>{2, 5, 3, 1}));
  EXPECT_EQ(deadlines_.size(), 0u);
}

TEST_F(DeadlinesTest, ACancelledKeyNeverFiresAndARescheduledOneFiresOnceAtItsNewTime) {
  auto now = Clock::now();
  deadlines_.schedule(1, now + 5ms);
  deadlines_.schedule(2, now + 5ms);
  deadlines_.schedule(3, now + 50ms);
  deadlines_.cancel(1);
  deadlines_.schedule(2, now + 30ms);  // later than it was
  deadlines_.schedule(3, now + 10ms);  // earlier than it was: the timer is armed again for it
  EXPECT_FALSE(deadlines_.scheduled(1));
  EXPECT_EQ(deadlines_.when(2), now + 30ms);
  run();
  EXPECT_EQ(fired_, (std::vector<int>{3, 2}));
}

TEST_F(DeadlinesTest, ACallbackMayScheduleItsKeyAgain) {
  int rounds = 0;
  Deadlines<int> again(io_, [&](int key) {
    if (++rounds < 3) again.schedule_after(key, 1ms);
  });
  again.schedule_after(7, 1ms);
  auto until = Clock::now() + 1s;
  while (again.size() && Clock::now() < until) io_.run_for(5ms);
  EXPECT_EQ(rounds, 3);
  EXPECT_EQ(again.size(), 0u);
}

// A key moved again and again (an ACK deadline per delivery of a busy queue) leaves stale items behind;
// the heap is rebuilt before they outnumber the live keys, so memory follows what is scheduled.
TEST_F(DeadlinesTest, StaleItemsAreBoundedByTheLiveKeys) {
  auto now = Clock::now();
  for (int i = 0; i < 10; ++i) deadlines_.schedule(i, now + 1h);
  size_t most = 0;
  for (int round = 0; round < 10000; ++round) {
    deadlines_.schedule(round % 10, now + 1h + std::chrono::milliseconds(round));
    if (round % 3 == 0) {
      deadlines_.cancel(round % 10);
      deadlines_.schedule(round % 10, now + 2h);
    }
    most = std::max(most, deadlines_.held());
  }
  EXPECT_EQ(deadlines_.size(), 10u);
  EXPECT_LE(most, 2 * 10u + 64 + 1);
  // Keys of two numbers (the streams' ack timers) are told apart.
  Deadlines<std::pair<uint64_t, uint64_t>> pairs(io_, [](std::pair<uint64_t, uint64_t>) {});
  pairs.schedule({1, 2}, now);
  EXPECT_TRUE(pairs.scheduled({1, 2}));
  EXPECT_FALSE(pairs.scheduled({2, 1}));
}

}  // namespace
}  // namespace siomq::broker
