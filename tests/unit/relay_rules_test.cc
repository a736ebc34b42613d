#include "surfaces/remote/relay_rules.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

#include "surfaces/remote/relay_settings.h"

namespace siomq::remote {
namespace {

using nlohmann::json;

std::optional<Role> where(const RelayRules& rules, std::string_view event, Role sender) {
  auto d = decide(rules, event, sender);
  return d ? std::optional<Role>(d->to) : std::nullopt;
}

TEST(RelayRules, BuiltinDirectionsAndRoleGuards) {
  RelayRules r{builtin_rules(), true, std::nullopt};
  EXPECT_EQ(where(r, "frame", Role::agent), Role::viewer);
  EXPECT_TRUE(decide(r, "frame", Role::agent)->binary);
  EXPECT_EQ(where(r, "frame", Role::viewer), std::nullopt);
  for (const char* e : {"input.mouse", "input.keyboard", "input.sas", "input.x.y", "remote.setmonitor", "rtc.answer", "rtc.ready"}) {
    EXPECT_EQ(where(r, e, Role::viewer), Role::agent) << e;
    EXPECT_EQ(where(r, e, Role::agent), std::nullopt) << e;
  }
  EXPECT_EQ(where(r, "rtc.offer", Role::agent), Role::viewer);
  EXPECT_EQ(where(r, "rtc.offer", Role::viewer), std::nullopt);
  EXPECT_EQ(where(r, "rtc.ice", Role::agent), Role::viewer);
  EXPECT_EQ(where(r, "rtc.ice", Role::viewer), Role::agent);
  // "input" and "input." are not "input.*"; unlisted events go to the opposite side.
  EXPECT_EQ(where(r, "input", Role::agent), Role::viewer);
  EXPECT_EQ(where(r, "input.", Role::agent), Role::viewer);
  EXPECT_EQ(where(r, "inputs.x", Role::agent), Role::viewer);
  r.relay_unlisted = false;
  EXPECT_EQ(where(r, "clipboard.set", Role::viewer), std::nullopt);
  EXPECT_EQ(where(r, "rtc.ready", Role::viewer), Role::agent);
}

TEST(RelayRules, ReservedNeverRelayedAndNotConfigurable) {
  RelayRules r{builtin_rules(), true, std::nullopt};
  for (const char* e : {"auth", "auth_ok", "auth_error", "RATE_LIMITED", "connect", "disconnect", "newListener", "error", "ping"}) {
    EXPECT_TRUE(is_reserved_event(e)) << e;
    EXPECT_EQ(where(r, e, Role::viewer), std::nullopt) << e;
    EXPECT_FALSE(r.table.set(e, {})) << e;
  }
  EXPECT_FALSE(is_reserved_event("auth.x"));
}

TEST(RelayRules, ExactBeatsPatternLongerPatternBeatsShorter) {
  RuleTable t;
  ASSERT_TRUE(t.set("a.*", {.to = To::agent}));
  ASSERT_TRUE(t.set("a.b.*", {.to = To::viewers}));
  ASSERT_TRUE(t.set("a.b.c", {.enabled = false}));
  EXPECT_EQ(t.find("a.x")->to, To::agent);
  EXPECT_EQ(t.find("a.b.x")->to, To::viewers);
  EXPECT_EQ(t.find("a.b.c.d")->to, To::viewers);
  EXPECT_FALSE(t.find("a.b.c")->enabled);
  EXPECT_EQ(t.find("b.a.x"), nullptr);
  EXPECT_EQ(t.find("a"), nullptr);
  for (const char* bad : {"", "*", ".*", "a*", "*.b", "a.*.*", "a\nb"}) EXPECT_FALSE(valid_pattern(bad)) << bad;
  EXPECT_FALSE(valid_pattern(std::string(257, 'x')));
  EXPECT_TRUE(valid_pattern(std::string(256, 'x')));
  // Matching time does not depend on the number of patterns: a long name of dots is one lookup per dot.
  std::string dots(100000, '.');
  EXPECT_EQ(t.find(dots), nullptr);
}

TEST(RelayRules, AllowListFiltersRulesAndUnlisted) {
  EventSet allow;
  ASSERT_TRUE(allow.add("frame"));
  ASSERT_TRUE(allow.add("rtc.*"));
  EXPECT_FALSE(allow.add("*"));
  RelayRules r{builtin_rules(), true, allow};
  EXPECT_EQ(where(r, "frame", Role::agent), Role::viewer);
  EXPECT_EQ(where(r, "rtc.ice", Role::agent), Role::viewer);
  EXPECT_EQ(where(r, "input.mouse", Role::viewer), std::nullopt);
  EXPECT_EQ(where(r, "chat", Role::viewer), std::nullopt);
}

TEST(RelaySettings, RemoteBlockMergesOverBuiltins) {
  auto s = parse_relay_settings(json::parse(R"({"remote":{"relay":{"clipboard.set":{"from":"viewer","to":"agent","max_bytes":10},
      "input.sas":{"enabled":false},"frame":{"to":"viewers","from":"agent"}},"relayUnlisted":"off","ticketTtlMs":1500,
      "max_viewers_per_session":2,"events_per_second":0,"max_tickets":7}})"));
  const RelayRules& r = s.remote.rules;
  EXPECT_FALSE(r.relay_unlisted);
  EXPECT_EQ(where(r, "clipboard.set", Role::viewer), Role::agent);
  EXPECT_EQ(decide(r, "clipboard.set", Role::viewer)->max_bytes, 10u);
  EXPECT_EQ(where(r, "input.sas", Role::viewer), std::nullopt);
  EXPECT_EQ(where(r, "input.mouse", Role::viewer), Role::agent);
  EXPECT_FALSE(decide(r, "frame", Role::agent)->binary) << "an override replaces the built-in rule whole";
  EXPECT_EQ(s.remote.limits.ticket_ttl_ms, 1500);
  EXPECT_EQ(s.remote.limits.max_viewers_per_session, 2u);
  EXPECT_EQ(s.remote.limits.events_per_second, 0);
  EXPECT_EQ(s.tickets.max_tickets, 7u);
  // Defaults without a block.
  auto d = parse_relay_settings(json::object());
  EXPECT_TRUE(d.remote.rules.relay_unlisted);
  EXPECT_EQ(d.remote.limits.ticket_ttl_ms, 60000);
  EXPECT_EQ(d.remote.limits.max_frame_bytes, size_t{4} << 20);
  EXPECT_TRUE(d.namespaces.empty());
}

TEST(RelaySettings, NamespacesWithoutBuiltinsReservedNamesIgnored) {
  auto s = parse_relay_settings(json::parse(R"({"namespaces":{"/chat":{"relay":{"msg":{"to":"agent"}}},
      "/legacy":{"module":"./x.js","options":{"relay_unlisted":"off"}},"/":{},"/remote":{"relay_unlisted":"off"}}})"));
  EXPECT_EQ(s.namespaces.size(), 2u);
  EXPECT_EQ(s.ignored, (std::vector<std::string>{"/", "/remote"}));
  EXPECT_TRUE(s.remote.rules.relay_unlisted) << "the configured /remote is ignored";
  const RelayNamespace* chat = s.find("/chat");
  ASSERT_NE(chat, nullptr);
  EXPECT_EQ(where(chat->rules, "frame", Role::agent), Role::viewer) << "no built-in rule: unlisted, opposite";
  EXPECT_FALSE(decide(chat->rules, "frame", Role::agent)->binary);
  EXPECT_FALSE(s.find("/legacy")->rules.relay_unlisted);
  EXPECT_EQ(s.find("/other"), nullptr);
  EXPECT_EQ(s.find("/remote"), &s.remote);
  EXPECT_EQ(attached_namespaces(json::parse(R"({"namespaces":{"/b":{},"/a":{},"/":{}}})")),
            json::parse(R"([{"name":"/remote","type":"builtin"},{"name":"/a","type":"relay"},{"name":"/b","type":"relay"}])"));
  EXPECT_EQ(attached_namespaces(json::parse(R"({"namespaces":7})")).size(), 1u);
}

TEST(RelaySettings, BadValuesNameTheKey) {
  auto message = [](const char* text) {
    try {
      parse_relay_settings(json::parse(text));
    } catch (const std::runtime_error& e) {
      return std::string(e.what());
    }
    return std::string("(accepted)");
  };
  EXPECT_EQ(message(R"({"remote":[]})"), "remote must be an object");
  EXPECT_EQ(message(R"({"remote":{"relay":{"x":{"to":"up"}}}})"), "remote.relay.x.to must be \"agent\", \"viewers\" or \"opposite\"");
  EXPECT_EQ(message(R"({"remote":{"relay":{"x":{}}}})"), "remote.relay.x.to is required: \"agent\", \"viewers\" or \"opposite\"");
  EXPECT_EQ(message(R"({"remote":{"relay":{"x":{"to":"agent","from":"me"}}}})"), "remote.relay.x.from must be \"agent\", \"viewer\" or \"any\"");
  EXPECT_EQ(message(R"({"remote":{"relay":{"auth_ok":{"to":"agent"}}}})"), "remote.relay.auth_ok is a reserved event name and is never relayed");
  EXPECT_EQ(message(R"({"remote":{"relay":{"a*":{"to":"agent"}}}})"), "remote.relay.a* is not an event name or a \"<prefix>.*\" pattern");
  EXPECT_EQ(message(R"({"remote":{"relay_unlisted":"maybe"}})"), "remote.relay_unlisted must be \"opposite\" or \"off\"");
  EXPECT_EQ(message(R"({"remote":{"allow":["ok",3]}})"), "remote.allow entries must be event names or \"<prefix>.*\" patterns");
  EXPECT_EQ(message(R"({"remote":{"max_frame_bytes":0}})"), "remote.max_frame_bytes must be a positive integer");
  EXPECT_EQ(message(R"({"remote":{"ticket_ttl_ms":1.5}})"), "remote.ticket_ttl_ms must be a positive integer");
  EXPECT_EQ(message(R"({"remote":{"auth_timeout_ms":"1s"}})"), "remote.auth_timeout_ms must be a number");
  EXPECT_EQ(message(R"({"namespaces":{"chat":{}}})"), "namespaces.chat is not a namespace name (\"/name\", at most 128 bytes)");
  EXPECT_EQ(message(R"({"namespaces":{"/a?b":{}}})"), "namespaces./a?b is not a namespace name (\"/name\", at most 128 bytes)");
  EXPECT_EQ(message(R"({"namespaces":{"/x":{"type":"module"}}})"),
            "namespaces./x.type must be \"relay\" (the only kind of namespace this server can attach)");
  EXPECT_EQ(message(R"({"namespaces":[]})"), "namespaces must be an object of namespaces by name");
  json many = json::object();
  for (int i = 0; i < 65; ++i) many["/n" + std::to_string(i)] = json::object();
  EXPECT_EQ(message(json({{"namespaces", many}}).dump().c_str()), "namespaces has more than 64 entries");
}

}  // namespace
}  // namespace siomq::remote
