#include "net/http_request.h"

#include <gtest/gtest.h>

#include "net/engine_request.h"

namespace siomq::net {
namespace {

TEST(ParseTarget, SplitsPathAndDecodesQuery) {
  auto t = parse_target("/socket.io/?EIO=4&transport=polling&sid=a%2Bb&x=1+2&flag");
  EXPECT_EQ(t.path, "/socket.io/");
  EXPECT_EQ(t.param("EIO"), "4");
  EXPECT_EQ(t.param("transport"), "polling");
  EXPECT_EQ(t.param("sid"), "a+b");
  EXPECT_EQ(t.param("x"), "1 2");
  EXPECT_EQ(t.param("flag"), "");
  EXPECT_FALSE(t.param("missing"));
}

TEST(ParseTarget, FirstValueWinsAndFragmentIsIgnored) {
  auto t = parse_target("/p?a=1&a=2#a=3");
  EXPECT_EQ(t.param("a"), "1");
  EXPECT_EQ(t.query.size(), 2u);
}

TEST(ParseTarget, MalformedEscapeDropsTheParameter) {
  auto t = parse_target("/p?sid=%zz&ok=%41");
  EXPECT_FALSE(t.param("sid"));
  EXPECT_EQ(t.param("ok"), "A");
}

TEST(PercentDecode, RejectsTruncatedEscapes) {
  EXPECT_FALSE(percent_decode("%"));
  EXPECT_FALSE(percent_decode("%4"));
  EXPECT_EQ(percent_decode("%41%42"), "AB");
}

TEST(HeaderTokens, AreCaseInsensitiveAndCommaSeparated) {
  EXPECT_TRUE(header_has_token("keep-alive, Upgrade", "upgrade"));
  EXPECT_TRUE(header_has_token("WebSocket", "websocket"));
  EXPECT_FALSE(header_has_token("upgrade-insecure", "upgrade"));
  EXPECT_FALSE(header_has_token("", "upgrade"));
}

TEST(WebSocketUpgrade, AcceptsAValidHandshakeAndNamesEachProblem) {
  const char* key = "dGhlIHNhbXBsZSBub25jZQ==";
  EXPECT_FALSE(websocket_upgrade_problem("GET", "websocket", "Upgrade", "13", key));
  EXPECT_TRUE(websocket_upgrade_problem("POST", "websocket", "Upgrade", "13", key));
  EXPECT_TRUE(websocket_upgrade_problem("GET", "h2c", "Upgrade", "13", key));
  EXPECT_TRUE(websocket_upgrade_problem("GET", "websocket", "keep-alive", "13", key));
  EXPECT_TRUE(websocket_upgrade_problem("GET", "websocket", "Upgrade", "8", key));
  EXPECT_TRUE(websocket_upgrade_problem("GET", "websocket", "Upgrade", "13", "short"));
  EXPECT_TRUE(websocket_upgrade_problem("GET", "websocket", "Upgrade", "13", ""));
}

EngineRequest classify(std::string_view method, std::string_view target, std::string_view upgrade = "",
                       bool eio3 = true) {
  return classify_engine_request(method, target, upgrade, "/socket.io/", eio3);
}

TEST(EngineRequest, OtherPathsAreNotEngineRequests) {
  EXPECT_EQ(classify("GET", "/health").kind, EngineRequest::kNotEngine);
  EXPECT_EQ(classify("GET", "/socket.io").kind, EngineRequest::kNotEngine);
}

TEST(EngineRequest, ErrorsMatchEngineIoCodes) {
  auto r = classify("GET", "/socket.io/?EIO=4&transport=carrier-pigeon");
  EXPECT_EQ(r.kind, EngineRequest::kError);
  EXPECT_EQ(r.error, EngineError::kTransportUnknown);
  EXPECT_EQ(classify("GET", "/socket.io/?EIO=5&transport=polling").error, EngineError::kUnsupportedProtocolVersion);
  EXPECT_EQ(classify("GET", "/socket.io/?transport=polling").error, EngineError::kUnsupportedProtocolVersion);
  EXPECT_EQ(classify("GET", "/socket.io/?EIO=3&transport=polling", "", false).error,
            EngineError::kUnsupportedProtocolVersion);
  EXPECT_EQ(classify("POST", "/socket.io/?EIO=4&transport=polling").error, EngineError::kBadHandshakeMethod);
  EXPECT_EQ(classify("GET", "/socket.io/?EIO=4&transport=websocket").error, EngineError::kBadRequest);
  EXPECT_EQ(classify("PUT", "/socket.io/?EIO=4&transport=polling&sid=x").error, EngineError::kBadRequest);
  EXPECT_EQ(engine_error_message(EngineError::kUnknownSid), "Session ID unknown");
}

TEST(EngineRequest, HandshakesSessionsAndPreflights) {
  auto h = classify("GET", "/socket.io/?EIO=3&transport=polling&t=abc");
  EXPECT_EQ(h.kind, EngineRequest::kHandshake);
  EXPECT_EQ(h.protocol, 3);
  EXPECT_FALSE(h.websocket);
  auto w = classify("GET", "/socket.io/?EIO=4&transport=websocket", "websocket");
  EXPECT_EQ(w.kind, EngineRequest::kHandshake);
  EXPECT_TRUE(w.websocket);
  auto s = classify("POST", "/socket.io/?EIO=4&transport=polling&sid=abc");
  EXPECT_EQ(s.kind, EngineRequest::kSession);
  EXPECT_EQ(s.sid, "abc");
  EXPECT_EQ(classify("OPTIONS", "/socket.io/?EIO=4").kind, EngineRequest::kPreflight);
  // An empty sid (also one cut off by a fragment) is no sid: a handshake, as Engine.IO treats it.
  EXPECT_EQ(classify("GET", "/socket.io/?EIO=4&transport=polling&sid").kind, EngineRequest::kHandshake);
  EXPECT_EQ(classify("GET", "/socket.io/?EIO=4&transport=polling&sid=#x").kind, EngineRequest::kHandshake);
}

}  // namespace
}  // namespace siomq::net
