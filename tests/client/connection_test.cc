// siomq::Connection against a real siomq-server: what waits while the server is away and what it gets
// when it is back, the client-side timeout and caps, closing, several URLs, a refused namespace.
#include <gtest/gtest.h>

#include "client_test_util.h"
#include "server_process.h"
#include "siomq/connection.h"

namespace siomq::test {
namespace {

using namespace std::chrono_literals;

class ConnectionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string error;
    ASSERT_TRUE(server_.start(&error)) << error;
  }
  void TearDown() override { EXPECT_EQ(server_.sanitizer_report(), ""); }
  Options options() {
    Options o;
    o.urls = {server_.url()};
    o.reconnect.initial_delay = 50ms;
    o.reconnect.max_delay = 200ms;
    return o;
  }
  ServerProcess server_;
};

TEST_F(ConnectionTest, WhatIsMadeWhileTheServerIsAwayGoesOutWhenItIsBack) {
  Connection c(options());
  ASSERT_TRUE(c.connect().get().ok());
  ASSERT_TRUE(c.request("/", "PING", "{}").get().ok());
  server_.kill9();
  ASSERT_TRUE(eventually([&] { return c.state() == State::reconnecting; }));
  auto pong = c.request("/", "PING", R"({"while":"away"})", {}, 20s);
  auto late = c.request("/", "PING", "{}", {}, 100ms);  // times out while held: never sent
  EXPECT_EQ(code_of(late.get()), errc::timeout);
  std::string error;
  ASSERT_TRUE(server_.start(&error)) << error;
  auto r = pong.get();
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_NE(r->json.find("away"), std::string::npos);
  EXPECT_EQ(c.state(), State::connected);
}

TEST_F(ConnectionTest, TheBufferIsCappedWhileDisconnected) {
  Options o = options();
  o.max_buffered_packets = 3;
  Connection c(o);
  ASSERT_TRUE(c.connect().get().ok());
  server_.kill9();
  ASSERT_TRUE(eventually([&] { return c.state() == State::reconnecting; }));
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(c.emit("/", "HELLO", "{}").ok()) << i;
  ASSERT_TRUE(eventually([&] { return code_of(c.emit("/", "HELLO", "{}")) == errc::buffer_full; }, 2s));
  auto refused = c.request("/", "PING", "{}").get();
  EXPECT_EQ(code_of(refused), errc::buffer_full);
}

TEST_F(ConnectionTest, CloseAnswersWhatWaitsAndRefusesWhatComes) {
  Connection c(options());
  ASSERT_TRUE(c.connect().get().ok());
  server_.kill9();
  ASSERT_TRUE(eventually([&] { return c.state() == State::reconnecting; }));
  auto waiting = c.request("/", "PING", "{}", {}, 20s);
  c.close();
  EXPECT_EQ(code_of(waiting.get()), errc::closed);
  EXPECT_EQ(code_of(c.emit("/", "PING", "{}")), errc::closed);
  EXPECT_EQ(code_of(c.request("/", "PING", "{}").get()), errc::closed);
  EXPECT_EQ(code_of(c.connect().get()), errc::closed);
  EXPECT_EQ(c.state(), State::closed);
}

TEST_F(ConnectionTest, TheNextUrlWhenTheFirstIsDownAndNamespacesOnOneConnection) {
  Options o = options();
  o.urls = {"http://127.0.0.1:1", server_.url()};
  Connection c(o);
  auto bus = c.join("/control");
  ASSERT_TRUE(c.connect().get().ok());
  ASSERT_TRUE(bus.get().ok());
  auto streams = c.request("/control", "stream.list", "{}").get();
  ASSERT_TRUE(streams.ok());
  EXPECT_EQ(streams->json, R"([{"ok":true,"streams":[]}])");
  EXPECT_FALSE(c.socket_id("/control").empty());
  EXPECT_TRUE(c.socket_id("/").empty());  // "/" is joined only when nothing else was, or when used
  EXPECT_TRUE(c.request("/", "PING", "{}").get().ok());
  EXPECT_FALSE(c.socket_id("/").empty());
  auto nowhere = c.join("/no-such-namespace").get();
  EXPECT_EQ(code_of(nowhere), errc::refused);
  EXPECT_EQ(code_of(c.request("/no-such-namespace", "x", "{}").get()), errc::refused);
  EXPECT_TRUE(c.request("/", "PING", "{}").get().ok());  // the others are unaffected
}

TEST_F(ConnectionTest, GivingUpAfterMaxAttempts) {
  Options o = options();
  o.reconnect.max_attempts = 2;
  Inbox<State> states;  // before the Connection: its handlers run until it is destroyed
  Connection c(o);
  c.on_state([&](State s, const std::string&) { states.push(s); });
  ASSERT_TRUE(c.connect().get().ok());
  auto waiting = c.request("/", "PING", "{}", {}, 20s);
  server_.kill9();
  ASSERT_TRUE(eventually([&] { return c.state() == State::closed; }, 5s));
  auto r = waiting.get();
  EXPECT_TRUE(code_of(r) == errc::unreachable || code_of(r) == errc::disconnected || r.ok());
  EXPECT_EQ(code_of(c.emit("/", "PING", "{}")), errc::closed);
  EXPECT_EQ(states.items().back(), State::closed);
}

}  // namespace
}  // namespace siomq::test
