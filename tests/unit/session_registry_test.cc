// The registry of live sessions (surfaces/session_registry.h): realms, per-address counts, and sessions
// that are gone.
#include "surfaces/session_registry.h"

#include <gtest/gtest.h>

#include "surface_fakes.h"

namespace siomq::surfaces {
namespace {

using testing::FakeSession;

constexpr int64_t kNow = 9'000'000;

// The session, now from `ip`.
std::shared_ptr<FakeSession> at(const std::shared_ptr<FakeSession>& s, const std::string& ip) {
  s->ip = ip;
  return s;
}

TEST(SessionRegistry, CountsOpenSessionsAndRecentConnectionsPerAddress) {
  SessionRegistry r;
  auto a = std::make_shared<FakeSession>("a"), b = std::make_shared<FakeSession>("b");
  auto c = std::make_shared<FakeSession>("c");
  EXPECT_EQ(r.add(at(a, "10.0.0.1"), kNow), std::make_pair(size_t{1}, size_t{1}));
  EXPECT_EQ(r.add(at(b, "10.0.0.1"), kNow + 10), std::make_pair(size_t{2}, size_t{2}));
  EXPECT_EQ(r.add(at(c, "10.0.0.2"), kNow + 20), std::make_pair(size_t{1}, size_t{1}));
  r.remove(a.get());
  EXPECT_EQ(r.size(), 2u);
  // Closing does not forget a connection made in the last minute; a minute later it is forgotten.
  EXPECT_EQ(r.add(at(a, "10.0.0.1"), kNow + 30), std::make_pair(size_t{2}, size_t{3}));
  r.remove(a.get());
  r.remove(b.get());
  EXPECT_EQ(r.add(at(a, "10.0.0.1"), kNow + 60'031), std::make_pair(size_t{1}, size_t{1}));
}

TEST(SessionRegistry, FilesSessionsByTheirRealmNow) {
  SessionRegistry r;
  auto a = std::make_shared<FakeSession>("a"), b = std::make_shared<FakeSession>("b");
  b->grant = auth::Grant{"shop", "consumer", false};
  r.add(at(a, "10.0.0.1"), kNow);
  r.add(at(b, "10.0.0.1"), kNow);
  EXPECT_EQ(r.in_realm("default").size(), 1u);
  ASSERT_EQ(r.in_realm("shop").size(), 1u);
  EXPECT_EQ(r.in_realm("shop")[0].get(), b.get());
  r.set_realm(a.get(), "shop");
  EXPECT_EQ(r.in_realm("shop").size(), 2u);
  EXPECT_TRUE(r.in_realm("default").empty());
  r.remove(b.get());
  EXPECT_EQ(r.in_realm("shop").size(), 1u);
}

TEST(SessionRegistry, HoldsSessionsWeakly) {
  SessionRegistry r;
  auto a = std::make_shared<FakeSession>("a");
  r.add(at(a, "10.0.0.1"), kNow);
  std::weak_ptr<FakeSession> weak = a;
  a.reset();
  EXPECT_TRUE(weak.expired());
  EXPECT_TRUE(r.in_realm("default").empty());
}

}  // namespace
}  // namespace siomq::surfaces
