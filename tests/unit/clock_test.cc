#include "wire/clock.h"

#include <gtest/gtest.h>

#include <chrono>

namespace siomq {
namespace {

TEST(Clock, UnixMsIsTheWallClockInMilliseconds) {
  using namespace std::chrono;
  int64_t before = duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
  int64_t now = unix_ms();
  int64_t after = duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
  EXPECT_LE(before, now);
  EXPECT_LE(now, after);
  EXPECT_GT(now, 1'600'000'000'000);  // after September 2020: milliseconds, not seconds
}

TEST(Clock, SteadyMsNeverGoesBack) {
  int64_t last = steady_ms();
  for (int i = 0; i < 1000; ++i) {
    int64_t now = steady_ms();
    EXPECT_GE(now, last);
    last = now;
  }
}

}  // namespace
}  // namespace siomq
