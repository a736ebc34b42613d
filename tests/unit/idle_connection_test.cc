// What an idle connection costs (docs/performance.md, "An idle connection"): the five objects every
// Socket.IO connection on "/" allocates each fit the allocator size class they are in now, so a new
// member that pushes one into the next class (16 to 32 bytes more for every connection) fails here and
// is a decision, written down, rather than an accident. The classes are tcmalloc's (the server's
// allocator); a make_shared object carries a 16-byte control block with it.
#include <gtest/gtest.h>

#include <cstddef>

#include "net/engine_session.h"
#include "net/sio_server.h"
#include "net/socket.h"
#include "net/websocket_connection.h"
#include "surface_fakes.h"
#include "surfaces/tyo_mq/socket_endpoint.h"

namespace siomq {
namespace {

constexpr size_t kControlBlock = 16;  // std::make_shared's counts and vtable pointer

TEST(IdleConnection, ObjectsFitTheirAllocatorClasses) {
  EXPECT_LE(sizeof(surfaces::SocketEndpoint) + kControlBlock, 320u) << "the tyo-mq session";
  EXPECT_LE(sizeof(net::WebSocketConnection) + kControlBlock, 320u) << "the WebSocket";
  EXPECT_LE(sizeof(net::EngineSession) + kControlBlock, 320u) << "the Engine.IO session";
  EXPECT_LE(sizeof(net::Socket) + kControlBlock, 160u) << "the Socket.IO socket";
  EXPECT_LE(sizeof(net::SioConnection), 96u) << "the Socket.IO connection (make_unique)";
}

// What a session takes on as it is used is allocated by that use.
TEST(IdleConnection, ASessionHoldsNothingUntilItIsUsed) {
  surfaces::testing::FakeSession s;
  EXPECT_FALSE(s.holds_anything());
  EXPECT_TRUE(s.holdings().realms.empty());  // read without allocating
  EXPECT_FALSE(s.holds_anything());
  s.held().realms.insert("default");
  ASSERT_TRUE(s.holds_anything());
  EXPECT_EQ(s.holdings().realms.size(), 1u);
}

}  // namespace
}  // namespace siomq
