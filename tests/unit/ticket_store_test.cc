#include "surfaces/remote/ticket_store.h"

#include <gtest/gtest.h>


namespace siomq::remote {
namespace {

Ticket ticket(std::string session, Role role = Role::agent) { return Ticket{"/remote", "realm", std::move(session), "m", role}; }

TEST(TicketStore, SingleUseAndBoundToWhatWasMinted) {
  TicketStore store;
  auto id = store.mint(ticket("s1", Role::viewer), "sock", 60000, 10, 10, 1000);
  ASSERT_TRUE(id);
  EXPECT_EQ(id->size(), 32u);
  EXPECT_EQ(id->find_first_not_of("0123456789abcdef"), std::string::npos);
  auto t = store.redeem(*id, 1001);
  ASSERT_TRUE(t);
  EXPECT_EQ(t->session_id, "s1");
  EXPECT_EQ(t->realm, "realm");
  EXPECT_EQ(t->role, Role::viewer);
  EXPECT_FALSE(store.redeem(*id, 1002)) << "single use";
  EXPECT_FALSE(store.redeem("", 1002));
  EXPECT_FALSE(store.redeem(std::string(32, '0'), 1002));
  EXPECT_EQ(store.size(), 0u);
}

TEST(TicketStore, ExpiresAtItsTtlWithAnInjectedClock) {
  TicketStore store;
  auto id = store.mint(ticket("s"), "sock", 60000, 10, 10, 0);
  ASSERT_TRUE(id);
  EXPECT_TRUE(store.redeem(*store.mint(ticket("s"), "sock", 60000, 10, 10, 0), 59999)) << "valid until its last ms";
  EXPECT_FALSE(store.redeem(*id, 60000)) << "expired at 60 s";
  auto late = store.mint(ticket("s"), "sock", 60000, 10, 10, 0);
  store.sweep(60000);
  EXPECT_EQ(store.size(), 0u) << "swept";
  EXPECT_FALSE(store.redeem(*late, 1));
}

TEST(TicketStore, BoundedGloballyAndPerSocketExpiredOnesFreeTheirPlace) {
  TicketStore store;
  ASSERT_TRUE(store.mint(ticket("a"), "one", 1000, 3, 2, 0));
  ASSERT_TRUE(store.mint(ticket("b"), "one", 5000, 3, 2, 0));
  auto third = store.mint(ticket("c"), "one", 1000, 3, 2, 0);
  ASSERT_FALSE(third);
  EXPECT_EQ(third.error().code, 429);
  EXPECT_EQ(third.error().message, "Too many unredeemed remote tickets for this socket");
  ASSERT_TRUE(store.mint(ticket("d"), "two", 1000, 3, 2, 0));
  auto full = store.mint(ticket("e"), "three", 1000, 3, 2, 0);
  ASSERT_FALSE(full);
  EXPECT_EQ(full.error().message, "Too many unredeemed remote tickets on this server");
  // At 1 s the two short-lived tickets expire: room again, for "one" and for others.
  EXPECT_TRUE(store.mint(ticket("f"), "one", 1000, 3, 2, 1000));
  EXPECT_TRUE(store.mint(ticket("g"), "three", 1000, 3, 2, 1000));
  EXPECT_EQ(store.size(), 3u);
}

}  // namespace
}  // namespace siomq::remote
