#include <gtest/gtest.h>

#include "transport/sio_client.h"

namespace siomq::client {
namespace {

TEST(ParseUrl, HostPortAndPath) {
  ClientOptions o;
  ASSERT_TRUE(parse_url("http://example.test:1234/mq/", o));
  EXPECT_EQ(o.host, "example.test");
  EXPECT_EQ(o.port, 1234);
  EXPECT_EQ(o.path, "/mq/");
  ClientOptions w;
  ASSERT_TRUE(parse_url("ws://127.0.0.1:17352", w));
  EXPECT_EQ(w.host, "127.0.0.1");
  EXPECT_EQ(w.path, "/socket.io/");
  ClientOptions bare;
  ASSERT_TRUE(parse_url("localhost", bare));
  EXPECT_EQ(bare.port, 17352);  // a bare host keeps the tyo-mq port
  ClientOptions http;
  ASSERT_TRUE(parse_url("http://localhost", http));
  EXPECT_EQ(http.port, 80);  // a URL without one means the scheme's
}

TEST(ParseUrl, RejectsMalformedPorts) {
  ClientOptions o;
  EXPECT_FALSE(parse_url("http://h:notaport", o));
  EXPECT_FALSE(parse_url("http://h:70000", o));
  EXPECT_FALSE(parse_url("http://:80", o));
  EXPECT_FALSE(parse_url("", o));
}

TEST(ParseUrl, HttpsAndWssAskForTls) {
  ClientOptions o;
  ASSERT_TRUE(parse_url("https://example.org:8443/mq", o));
  EXPECT_TRUE(o.tls);
  EXPECT_EQ(o.host, "example.org");
  EXPECT_EQ(o.port, 8443);
  ClientOptions w;
  ASSERT_TRUE(parse_url("wss://example.org", w));
  EXPECT_TRUE(w.tls);
  EXPECT_EQ(w.port, 443);
  ClientOptions plain;
  ASSERT_TRUE(parse_url("ws://example.org:1", plain));
  EXPECT_FALSE(plain.tls);
}

}  // namespace
}  // namespace siomq::client
