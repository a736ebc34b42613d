// Presence across nodes (broker/peer_presence.h): two registries passing their changes to each other, as
// two nodes do through <c>:presence, tell their clients what one registry holding both clients would;
// the presence note's text; the consumer-name index members of cluster/name_claims.h.
#include <gtest/gtest.h>

#include <algorithm>

#include "broker/realm_registry.h"
#include "cluster/link.h"
#include "cluster/name_claims.h"
#include "cluster/presence_note.h"
#include "fake_endpoint.h"

namespace siomq::broker {
namespace {

SubscribeSpec subscription(std::string producer, std::string event, std::string consumer) {
  SubscribeSpec s;
  s.producer = std::move(producer);
  s.event = std::move(event);
  s.consumer = std::move(consumer);
  s.id = s.consumer + "-id";
  s.consumer_id = s.consumer;
  return s;
}

// "<recipient socket> <event> <payload>" for each notice, sorted (nodes answer in no set order).
std::vector<std::string> heard(const std::vector<Notice>& notices) {
  std::vector<std::string> out;
  for (const auto& n : notices) {
    auto [event, payload] = surfaces::presence_event(n.presence);
    out.push_back(n.to->socket_id() + " " + event + " " + payload);
  }
  std::sort(out.begin(), out.end());
  return out;
}

// Two nodes: what `from` recorded goes to `to` (through the note's text, as in a cluster); the answers go
// back to `from`. Returns every notice either side's clients hear.
std::vector<Notice> exchange(RealmRegistry& from, RealmRegistry& to, std::vector<Notice> local) {
  for (const auto& change : from.take_peer_presence()) {
    auto text = cluster::encode_presence_note({"from", "r", change});
    EXPECT_TRUE(text);
    auto note = cluster::decode_presence_note(*text);
    EXPECT_TRUE(note);
    std::vector<PeerPresence> answers;
    for (auto& n : to.peer_presence(note->change, answers)) local.push_back(std::move(n));
    for (const auto& answer : answers) {
      std::vector<PeerPresence> none;
      for (auto& n : from.peer_presence(answer, none)) local.push_back(std::move(n));
      EXPECT_TRUE(none.empty());
    }
  }
  return local;
}

TEST(PeerPresence, TwoNodesTellTheirClientsWhatOneNodeWould) {
  RealmRegistry one, a, b;
  a.track_interest();
  b.track_interest();
  auto prod = std::make_shared<FakeEndpoint>("ps"), cons = std::make_shared<FakeEndpoint>("cs");
  auto prod2 = std::make_shared<FakeEndpoint>("ps2"), cons2 = std::make_shared<FakeEndpoint>("cs2");
  // The producer on A, the consumer on B; `one` holds both.
  auto same = [](const std::vector<Notice>& single, const std::vector<Notice>& split) { EXPECT_EQ(heard(single), heard(split)); };
  same(one.register_producer("prod", "pid", prod), exchange(a, b, a.register_producer("prod", "pid", prod)));
  same(*one.register_consumer("cons", "cid", cons), exchange(b, a, *b.register_consumer("cons", "cid", cons)));
  same(one.subscribe(subscription("prod", "e", "cons"), cons).second,
       exchange(b, a, b.subscribe(subscription("prod", "e", "cons"), cons).second));
  // A second subscription under TYO-MQ-ALL, and one to a producer nobody registered.
  same(one.subscribe(subscription("TYO-MQ-ALL", "x", "cons"), cons).second,
       exchange(b, a, b.subscribe(subscription("TYO-MQ-ALL", "x", "cons"), cons).second));
  same(one.subscribe(subscription("nobody", "y", "cons"), cons).second,
       exchange(b, a, b.subscribe(subscription("nobody", "y", "cons"), cons).second));
  auto single = one.disconnect(prod);
  auto split = exchange(a, b, a.disconnect(prod));
  same(single, split);
  EXPECT_EQ(heard(split), std::vector<std::string>{R"(cs DISCONNECT-cid {"event":"DISCONNECT","socket":"ps","producer":"prod"})"});
  // The producer comes back on another connection: SUBSCRIBE-TO (answered by B) and CONNECT.
  same(one.register_producer("prod", "pid", prod2), exchange(a, b, a.register_producer("prod", "pid", prod2)));
  // The consumer leaves and comes back.
  same(one.disconnect(cons), exchange(b, a, b.disconnect(cons)));
  same(*one.register_consumer("cons", "cid", cons2), exchange(b, a, *b.register_consumer("cons", "cid", cons2)));
  EXPECT_EQ(heard(exchange(b, a, {})), std::vector<std::string>{});
}

TEST(PeerPresence, OnlyChangesAreToldAndATyoMqAllSubscriberHearsARemoteProducerLeave) {
  RealmRegistry a, b;
  a.track_interest();
  b.track_interest();
  auto p = std::make_shared<FakeEndpoint>("ps"), c = std::make_shared<FakeEndpoint>("cs");
  // Registering again on the same connection, or subscribing again, tells the other nodes nothing new.
  for (int i = 0; i < 3; ++i) a.register_producer("prod", "pid", p);
  EXPECT_EQ(a.take_peer_presence().size(), 1u);
  a.register_producer("prod", "other-id", p);
  EXPECT_EQ(a.take_peer_presence().size(), 1u);
  for (int i = 0; i < 3; ++i) b.subscribe(subscription("TYO-MQ-ALL", "e", "watch"), c);
  EXPECT_EQ(b.take_peer_presence().size(), 1u);
  for (int i = 0; i < 3; ++i) b.register_consumer("watch", "wid", c);
  EXPECT_EQ(b.take_peer_presence().size(), 1u);
  auto left = exchange(a, b, a.disconnect(p));
  EXPECT_EQ(heard(left), std::vector<std::string>{R"(cs DISCONNECT-wid {"event":"DISCONNECT","socket":"ps","producer":"prod"})"});
}

TEST(PeerPresence, NothingIsRecordedOutsideACluster) {
  RealmRegistry alone;
  auto p = std::make_shared<FakeEndpoint>("ps");
  alone.register_producer("p", "pid", p);
  alone.subscribe(subscription("q", "e", "c"), p);
  alone.disconnect(p);
  EXPECT_TRUE(alone.take_peer_presence().empty());
}

TEST(PeerPresence, AConsumerOfManyProducersIsToldInPieces) {
  RealmRegistry a;
  a.track_interest();
  auto c = std::make_shared<FakeEndpoint>("cs");
  for (size_t i = 0; i < kMaxPeerPresenceNames + 10; ++i) a.subscribe(subscription("p" + std::to_string(i), "e", "c"), c);
  a.take_peer_presence();
  a.register_consumer("c", "cid", c);
  auto changes = a.take_peer_presence();
  ASSERT_EQ(changes.size(), 2u);
  EXPECT_EQ(changes[0].names.size() + changes[1].names.size(), kMaxPeerPresenceNames + 10);
  for (const auto& change : changes) EXPECT_TRUE(cluster::encode_presence_note({"n", "r", change}));
}

TEST(PeerPresence, HostileNotesAreRefusedWhole) {
  for (const char* text : {
           "", "[]", "{}", R"({"node_id":"n","realm":"r","kind":"nope","name":"x","socket":"","id":"","producer":"","names":[],"online":true})",
           R"({"node_id":"","realm":"r","kind":"subscribed","name":"x","socket":"","id":"","producer":"","names":[],"online":true})",
           R"({"node_id":"n","realm":"r","kind":"subscribed","name":"x","socket":"","id":"","producer":"","names":[1],"online":true})",
           R"({"node_id":"n","realm":"r","kind":"subscribed","name":"x","socket":"","id":"","producer":"","names":[],"online":1})",
           R"({"node_id":"n","realm":7,"kind":"subscribed","name":"x","socket":"","id":"","producer":"","names":[],"online":true})",
           R"({"node_id":"n","realm":"r","kind":"subscribed","name":"x","socket":"","id":"","producer":"","names":[],"online":true)",
       }) {
    EXPECT_FALSE(cluster::decode_presence_note(text)) << text;
  }
  EXPECT_FALSE(cluster::decode_presence_note(std::string(cluster::kMaxNoteBytes + 1, ' ')));
  PeerPresence huge{PeerPresence::Kind::producer_online, std::string(cluster::kMaxNoteBytes, 'x'), "s", {}, {}, {}, true};
  EXPECT_FALSE(cluster::encode_presence_note({"n", "r", huge}));
}

TEST(NameClaims, IndexMembersNameTheRealmAndTheNameForAnyBytes) {
  for (auto [realm, name] : std::vector<std::pair<std::string, std::string>>{
           {"default", "solo"}, {"", ""}, {"a:b", ":c"}, {"12:x", "3"}, {std::string("r\0\n", 3), "n\xff"}}) {
    auto back = cluster::parse_name_index_member(cluster::name_index_member(realm, name));
    ASSERT_TRUE(back);
    EXPECT_EQ(back->first, realm);
    EXPECT_EQ(back->second, name);
  }
  for (const char* bad : {"", "x", ":", "5:abc", "-1:a", "1a:b"}) EXPECT_FALSE(cluster::parse_name_index_member(bad)) << bad;
}

}  // namespace
}  // namespace siomq::broker
