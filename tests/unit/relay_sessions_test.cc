#include "surfaces/remote/relay_sessions.h"

#include <gtest/gtest.h>

namespace siomq::remote {
namespace {

TEST(RelaySessions, BoundedPerSessionAndPerNamespaceRoomsDistinct) {
  RelayLimits l;
  l.max_sessions = 2;
  l.max_agents_per_session = 1;
  l.max_viewers_per_session = 2;
  RelaySessions s;
  SessionKey a{"/remote", "r", "a"}, b{"/remote", "r", "b"}, c{"/remote", "r", "c"};
  EXPECT_TRUE(s.join(a, Role::agent, l));
  EXPECT_FALSE(s.join(a, Role::agent, l));
  EXPECT_TRUE(s.join(a, Role::viewer, l));
  EXPECT_TRUE(s.join(a, Role::viewer, l));
  EXPECT_EQ(s.join(a, Role::viewer, l).error().code, 429);
  EXPECT_TRUE(s.join(b, Role::viewer, l));
  EXPECT_FALSE(s.join(c, Role::viewer, l)) << "two sessions at most";
  EXPECT_TRUE(s.join(SessionKey{"/chat", "r", "c"}, Role::viewer, l)) << "counted per namespace";
  s.leave(b, Role::viewer);
  EXPECT_TRUE(s.join(c, Role::viewer, l)) << "b ended with its last peer";
  EXPECT_EQ(s.sessions("/remote"), 2u);
  // Rooms: by realm, session and side; length prefixes keep "ab"+"c" from meeting "a"+"bc".
  EXPECT_NE(room_of({"/remote", "ab", "c"}, Role::agent), room_of({"/remote", "a", "bc"}, Role::agent));
  EXPECT_NE(room_of(a, Role::agent), room_of(a, Role::viewer));
  EXPECT_NE(room_of({"/remote", "r1", "s"}, Role::viewer), room_of({"/remote", "r2", "s"}, Role::viewer));
}

}  // namespace
}  // namespace siomq::remote
