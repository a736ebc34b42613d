// The bus across nodes (docs/scale-out.md "The bus across nodes"): the interest terms a realm's bus
// subscriptions and stream bindings share, the directory the other nodes build from them (RemoteBus), routing
// with it (a queue group's turns spread over nodes, each message once per group across two sublists), the
// relayed text (round trip, hostile texts refused) and the inboxes that name their node.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "broker/realm_registry.h"
#include "broker/sublist.h"
#include "cluster/bus_relay.h"
#include "cluster/interest.h"

namespace siomq::broker {
namespace {

struct Counter : BusSink {
  std::vector<std::string> got;  // data
  void deliver(const BusMessagePtr& m, std::string_view, bool) override { got.push_back(m->data); }
};

BusMessagePtr message(std::string subject, std::string data = "") {
  auto m = std::make_shared<BusMessage>();
  m->subject = std::move(subject);
  m->data = std::move(data);
  return m;
}

std::vector<std::string> sorted(std::vector<std::string> v) {
  std::sort(v.begin(), v.end());
  return v;
}

std::vector<std::string> terms_of(const RealmRegistry& r) { return sorted(r.interest_terms()); }

// What another node knows of `r`'s terms (realm "r"), as the view reads them from its hash.
std::shared_ptr<const RemoteBus> directory_of(const RealmRegistry& r, const std::string& node) {
  cluster::InterestView view;
  std::vector<std::string> fields;
  for (auto& t : r.interest_terms()) fields.push_back(cluster::interest_field({"r", t}));
  view.replace(node, 1, fields);
  return view.take_bus();
}

// How a publish on the node holding `dir`'s view routes in realm "r": the other nodes' turns into `picks`.
BusScope published(const RemoteBus& dir, std::vector<QueuePick>& picks) {
  BusScope scope;
  scope.remote = &dir;
  scope.realm = "r";
  scope.picks = &picks;
  return scope;
}

TEST(ClusterBus, SubscriptionsAndStreamBindingsAreSharedAsTermsInboxesAreNot) {
  RealmRegistry r;
  r.track_interest();
  auto sink = std::make_shared<Counter>();
  auto a = r.bus().add("orders.*", "", sink, "1");
  auto b = r.bus().add("orders.*", "", sink, "2");  // one term for both
  auto q = r.bus().add("work.>", "workers", sink, "3");
  auto inbox = r.bus().add("_INBOX.abc", "", sink, "inbox", /*shared=*/false);
  r.set_stream_subjects({"orders.*", "log.>"});  // counted apart from the subscriptions
  EXPECT_EQ(terms_of(r), sorted({"borders.*", "sorders.*", "slog.>", "q7:workerswork.>"}));
  auto deltas = r.take_interest_deltas();
  EXPECT_EQ(deltas.size(), 4u);
  r.bus().remove(a);
  EXPECT_TRUE(r.take_interest_deltas().empty()) << "another subscription still names the term";
  // A subscription whose max is reached leaves in route(), and its term with it.
  r.bus().set_max(b, 1);
  std::vector<Sublist::Copy> copies;
  r.bus().route("orders.x", copies);
  EXPECT_EQ(r.take_interest_deltas(), (std::vector<std::pair<std::string, int>>{{"borders.*", -1}}));
  r.set_stream_subjects({"log.>"});
  EXPECT_EQ(r.take_interest_deltas(), (std::vector<std::pair<std::string, int>>{{"sorders.*", -1}}));
  r.bus().remove(q);
  r.bus().remove(inbox);
  r.set_stream_subjects({});
  auto gone = r.take_interest_deltas();
  std::sort(gone.begin(), gone.end());
  EXPECT_EQ(gone, (std::vector<std::pair<std::string, int>>{{"q7:workerswork.>", -1}, {"slog.>", -1}}));
  EXPECT_TRUE(r.interest_terms().empty());
}

TEST(ClusterBus, DirectoryFindsNodesByWildcardAndGroupsByName) {
  RealmRegistry b;
  b.track_interest();
  auto sink = std::make_shared<Counter>();
  b.bus().add("a.*", "", sink, "1");
  b.bus().add("x.>", "", sink, "2");
  b.bus().add("a.*", "svc", sink, "3");
  auto dir = directory_of(b, "node-b");
  ASSERT_TRUE(dir);
  std::vector<std::string> nodes;
  dir->plain_targets("r", "a.b", nodes);
  EXPECT_EQ(nodes, std::vector<std::string>{"node-b"});
  nodes.clear();
  dir->plain_targets("r", "a.b.c", nodes);
  EXPECT_TRUE(nodes.empty());
  dir->plain_targets("r", "x.y.z", nodes);
  EXPECT_EQ(nodes, std::vector<std::string>{"node-b"});
  nodes.clear();
  dir->plain_targets("other", "a.b", nodes);
  EXPECT_TRUE(nodes.empty()) << "realms apart";
  ASSERT_TRUE(dir->queue("r", "a.*", "svc"));
  EXPECT_EQ(dir->queue("r", "a.*", "svc")->nodes, std::vector<std::string>{"node-b"});
  EXPECT_FALSE(dir->queue("r", "a.*", "other"));
  EXPECT_TRUE(dir->any("r", "a.q"));
  EXPECT_FALSE(dir->any("r", "b.q"));
  EXPECT_FALSE(dir->any("other", "a.q"));
}

TEST(ClusterBus, StreamBindingsWantMessagesButAnswerNoRequestTyoTermsAreNotBusInterest) {
  cluster::InterestView view;
  view.replace("stream-node", 1, {cluster::interest_field({"r", "sorders.>"})});
  view.replace("tyo-node", 1, {cluster::interest_field({"r", "*"}), cluster::interest_field({"r", "=p-e"})});
  view.replace("star-realm", 1, {cluster::interest_field({"*", "bx.>"}), cluster::interest_field({"*", "q1:gx.y"})});
  auto dir = view.take_bus();
  ASSERT_TRUE(dir);
  std::vector<std::string> nodes;
  dir->plain_targets("r", "orders.new", nodes);
  EXPECT_EQ(nodes, std::vector<std::string>{"stream-node"}) << "tyo-mq's \"*\" is not bus interest";
  EXPECT_FALSE(dir->any("r", "orders.new")) << "a stream binding answers no request";
  nodes.clear();
  dir->plain_targets("s", "x.y", nodes);
  EXPECT_TRUE(nodes.empty()) << "realm \"*\" is no bus realm";
  EXPECT_FALSE(dir->queue("s", "x.y", "g"));
  EXPECT_FALSE(view.take_bus()) << "built again only when something changed";
  // A pattern too long to share is every subject.
  EXPECT_EQ(bus_interest_term(std::string(2000, 'a')), "b>");
  EXPECT_EQ(stream_interest_term(std::string(2000, 'a')), "s>");
}

TEST(ClusterBus, InboxesNameTheirNodeForReplies) {
  cluster::InterestView view;
  view.replace("node-a", 1, {});  // no bus interest at all: its requesters' replies still find it
  view.replace("node-b", 1, {cluster::interest_field({"r", "bsvc"})});
  auto dir = view.take_bus();
  ASSERT_TRUE(dir);
  const std::string token = inbox_token("node-a");
  EXPECT_EQ(token.size(), 16u);
  EXPECT_EQ(token, inbox_token("node-a")) << "the same on every node";
  EXPECT_NE(token, inbox_token("node-b"));
  const std::string* node = dir->inbox_node("_INBOX." + token + ".abc");
  ASSERT_TRUE(node);
  EXPECT_EQ(*node, "node-a");
  EXPECT_TRUE(dir->inbox_node("_INBOX." + inbox_token("node-b") + ".x"));
  EXPECT_FALSE(dir->inbox_node("_INBOX." + inbox_token("node-z") + ".x")) << "no such peer";
  EXPECT_FALSE(dir->inbox_node("_INBOX." + token)) << "a token needs the rest";
  EXPECT_FALSE(dir->inbox_node("_INBOX.abc"));
  EXPECT_FALSE(dir->inbox_node("svc." + token + ".x"));
  EXPECT_EQ(inbox_token_of("_INBOX." + token + ".abc"), token);
  EXPECT_EQ(inbox_token_of("_INBOX.abc"), "");
  EXPECT_EQ(inbox_token_of("_INBOX." + token), "");
}

// Two nodes' sublists, A publishing: each message reaches exactly one member of the group, the turns
// spread over A's member and node B, and B's turns over its two members.
TEST(ClusterBus, QueueGroupTurnsSpreadOverNodesOnceEach) {
  RealmRegistry a, b;
  a.track_interest();
  b.track_interest();
  auto a1 = std::make_shared<Counter>(), b1 = std::make_shared<Counter>(), b2 = std::make_shared<Counter>();
  auto plain_b = std::make_shared<Counter>();
  a.bus().add("jobs.*", "w", a1, "1");
  b.bus().add("jobs.*", "w", b1, "1");
  b.bus().add("jobs.*", "w", b2, "2");
  b.bus().add("jobs.>", "", plain_b, "3");
  auto dir = directory_of(b, "node-b");
  for (int i = 0; i < 300; ++i) {
    auto m = message("jobs.x", std::to_string(i));
    std::vector<Sublist::Copy> copies;
    std::vector<QueuePick> picks;
    BusScope scope = published(*dir, picks);
    a.bus().route(m->subject, copies, scope);
    deliver(copies, m);
    std::vector<std::string> nodes;
    dir->plain_targets("r", m->subject, nodes);
    for (const auto& p : picks) nodes.push_back(p.node);
    ASSERT_FALSE(nodes.empty());
    // What B is sent: the groups whose turn it got.
    std::vector<std::pair<std::string, std::string>> named;
    for (const auto& p : picks) named.emplace_back(p.pattern, p.queue);
    std::vector<Sublist::Copy> there;
    BusScope relayed;
    relayed.named = &named;
    b.bus().route(m->subject, there, relayed);
    deliver(there, m);
  }
  EXPECT_EQ(a1->got.size() + b1->got.size() + b2->got.size(), 300u);
  EXPECT_EQ(a1->got.size(), 150u);
  EXPECT_EQ(b1->got.size(), 75u);
  EXPECT_EQ(b2->got.size(), 75u);
  EXPECT_EQ(plain_b->got.size(), 300u) << "plain subscribers get every message";
  std::vector<std::string> all = a1->got;
  all.insert(all.end(), b1->got.begin(), b1->got.end());
  all.insert(all.end(), b2->got.begin(), b2->got.end());
  std::sort(all.begin(), all.end());
  EXPECT_EQ(std::unique(all.begin(), all.end()), all.end()) << "no message twice in the group";
}

TEST(ClusterBus, GroupWithNoMemberHereGoesWhollyToOtherNodesAndTurnsComeBackWhenTheRelayFails) {
  RealmRegistry a, b;
  b.track_interest();
  auto member = std::make_shared<Counter>();
  b.bus().add("svc.x", "g", member, "1");
  auto dir = directory_of(b, "node-b");
  std::vector<Sublist::Copy> copies;
  std::vector<QueuePick> picks;
  BusScope scope = published(*dir, picks);
  EXPECT_EQ(a.bus().route("svc.x", copies, scope), 0u);
  ASSERT_EQ(picks.size(), 1u);
  EXPECT_EQ(picks[0].node, "node-b");
  EXPECT_EQ(picks[0].queue, "g");
  // A relay that cannot leave: the picked groups' turns go to members here after all, plain ones not again.
  auto local = std::make_shared<Counter>(), plain = std::make_shared<Counter>();
  b.bus().add("svc.*", "", plain, "2");
  std::vector<std::pair<std::string, std::string>> named{{"svc.x", "g"}};
  std::vector<Sublist::Copy> back;
  BusScope give_back;
  give_back.named = &named;
  give_back.groups_only = true;
  EXPECT_EQ(b.bus().route("svc.x", back, give_back), 1u);
  deliver(back, message("svc.x", "m"));
  EXPECT_EQ(member->got.size(), 1u);
  EXPECT_TRUE(plain->got.empty());
}

TEST(ClusterBus, RemoteOnlyGroupsEachGoRoundTheirOwnNodes) {
  cluster::InterestView view;
  for (const char* node : {"node-b", "node-c"})
    view.replace(node, 1, {cluster::interest_field({"r", "q2:g1x"}), cluster::interest_field({"r", "q2:g2x"})});
  auto dir = view.take_bus();
  Sublist a;
  std::map<std::string, std::map<std::string, int>> turns;  // group -> node -> turns
  for (int i = 0; i < 100; ++i) {
    std::vector<Sublist::Copy> copies;
    std::vector<QueuePick> picks;
    BusScope scope = published(*dir, picks);
    a.route("x", copies, scope);
    ASSERT_EQ(picks.size(), 2u);
    for (const auto& p : picks) turns[p.queue][p.node]++;
  }
  for (const char* group : {"g1", "g2"}) {
    EXPECT_EQ(turns[group]["node-b"], 50) << group;
    EXPECT_EQ(turns[group]["node-c"], 50) << group;
  }
}

TEST(ClusterBus, ARelayNamingManyGroupsReachesThoseOnly) {
  Sublist b;
  std::vector<std::shared_ptr<Counter>> members;
  for (int g = 0; g < 20; ++g) {
    members.push_back(std::make_shared<Counter>());
    b.add("x", "g" + std::to_string(g), members.back(), std::to_string(g));
  }
  std::vector<std::pair<std::string, std::string>> named;
  for (int g = 0; g < 20; g += 2) named.emplace_back("x", "g" + std::to_string(g));
  named.emplace_back("x", "not-here");
  for (int round = 0; round < 3; ++round) {
    std::vector<Sublist::Copy> copies;
    BusScope scope;
    scope.named = &named;
    EXPECT_EQ(b.route("x", copies, scope), 10u);
    deliver(copies, message("x", "m"));
  }
  for (int g = 0; g < 20; ++g) EXPECT_EQ(members[static_cast<size_t>(g)]->got.size(), g % 2 ? 0u : 3u) << g;
}

// A queue group whose last member here takes a message and finishes (its `max` reached) is not given a
// turn on another node for the same message too.
TEST(ClusterBus, AMemberFinishingHereDoesNotHandTheSameMessageElsewhere) {
  RealmRegistry b;
  b.track_interest();
  b.bus().add("svc", "q", std::make_shared<Counter>(), "1");
  auto dir = directory_of(b, "node-b");
  Sublist a;
  auto one_shot = std::make_shared<Counter>();
  a.set_max(a.add("svc", "q", one_shot, "1"), 1);
  std::vector<Sublist::Copy> copies;
  std::vector<QueuePick> picks;
  BusScope scope = published(*dir, picks);
  a.route("svc", copies, scope);  // the group's first turn is this node's
  EXPECT_EQ(copies.size(), 1u);
  EXPECT_TRUE(picks.empty()) << "the same message would reach the group on node B too";
  EXPECT_TRUE(a.empty());
}

// Groups with no member here, on subjects that alternate: each still goes round its own nodes.
TEST(ClusterBus, RemoteOnlyGroupsOnAlternatingSubjectsEachSpread) {
  cluster::InterestView view;
  for (const char* node : {"node-b", "node-c"})
    view.replace(node, 1, {cluster::interest_field({"r", "q1:qsvc.a"}), cluster::interest_field({"r", "q1:qsvc.b"})});
  auto dir = view.take_bus();
  Sublist a;
  std::map<std::string, std::map<std::string, int>> turns;  // subject -> node -> turns
  for (int i = 0; i < 100; ++i) {
    const std::string subject = i % 2 ? "svc.a" : "svc.b";
    std::vector<Sublist::Copy> copies;
    std::vector<QueuePick> picks;
    BusScope scope = published(*dir, picks);
    a.route(subject, copies, scope);
    ASSERT_EQ(picks.size(), 1u);
    turns[subject][picks[0].node]++;
  }
  for (const char* subject : {"svc.a", "svc.b"}) {
    EXPECT_EQ(turns[subject]["node-b"], 25) << subject;
    EXPECT_EQ(turns[subject]["node-c"], 25) << subject;
  }
}

// While the relay is backed up a group with members here keeps its turns; one without still goes out.
TEST(ClusterBus, BackedUpRelayKeepsTurnsHomeButStillServesGroupsWithNobodyHere) {
  cluster::InterestView view;
  view.replace("node-b", 1, {cluster::interest_field({"r", "q1:hx"}), cluster::interest_field({"r", "q1:rx"})});
  auto dir = view.take_bus();
  Sublist a;
  auto here = std::make_shared<Counter>();
  a.add("x", "h", here, "1");
  for (int i = 0; i < 10; ++i) {
    std::vector<Sublist::Copy> copies;
    std::vector<QueuePick> picks;
    BusScope scope = published(*dir, picks);
    scope.keep_turns = true;
    a.route("x", copies, scope);
    deliver(copies, message("x", "m"));
    ASSERT_EQ(picks.size(), 1u);
    EXPECT_EQ(picks[0].queue, "r");
  }
  EXPECT_EQ(here->got.size(), 10u);
}

}  // namespace
}  // namespace siomq::broker

namespace siomq::cluster {
namespace {

TEST(BusRelayText, RoundTripsBinaryDataHeaderReplyAndQueues) {
  broker::BusMessage m;
  m.subject = "orders.new";
  m.reply = "_INBOX.x1";
  m.header = R"({"Msg-Id":"a\"b","k":"v"})";
  m.data = std::string("\0\x01\xff\"\\", 5);
  std::vector<std::pair<std::string, std::string>> queues{{"orders.*", "w"}, {"orders.>", "q\"2"}};
  auto text = encode_bus_relay("node-a", "realm\x01", m, queues);
  EXPECT_TRUE(is_bus_relay(text));
  auto back = decode_bus_relay(text, 1 << 20);
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(back->node_id, "node-a");
  EXPECT_EQ(back->realm, "realm\x01");
  EXPECT_EQ(back->message.subject, m.subject);
  EXPECT_EQ(back->message.reply, m.reply);
  EXPECT_EQ(back->message.header, m.header);
  EXPECT_EQ(back->message.data, m.data);
  EXPECT_EQ(back->queues, queues);
  auto plain = decode_bus_relay(encode_bus_relay("n", "r", broker::BusMessage{"s", "", "", "", {}, 0}, {}), 1 << 20);
  ASSERT_TRUE(plain);
  EXPECT_TRUE(plain->message.reply.empty() && plain->message.header.empty() && plain->queues.empty());
  EXPECT_FALSE(decode_bus_relay(text, text.size() - 1)) << "bounded";
}

TEST(BusRelayText, HostileTextsAreRefused) {
  const char* bad[] = {
      "",
      "{\"bus\":",
      "{\"bus\":{},\"node_id\":\"n\"}",
      "{\"bus\":{\"realm\":\"r\",\"subject\":\"a.*\",\"data\":\"\"},\"node_id\":\"n\"}",  // a wildcard
      "{\"bus\":{\"realm\":\"r\",\"subject\":\"a..b\",\"data\":\"\"},\"node_id\":\"n\"}",
      "{\"bus\":{\"realm\":\"\",\"subject\":\"a\",\"data\":\"\"},\"node_id\":\"n\"}",
      "{\"bus\":{\"realm\":\"r\",\"subject\":\"a\",\"data\":\"\"},\"node_id\":\"\"}",
      "{\"bus\":{\"realm\":\"r\",\"subject\":\"a\",\"data\":\"!!\"},\"node_id\":\"n\"}",
      "{\"bus\":{\"realm\":\"r\",\"subject\":\"a\",\"data\":5},\"node_id\":\"n\"}",
      "{\"bus\":{\"realm\":\"r\",\"subject\":\"a\"},\"node_id\":\"n\"}",
      "{\"bus\":{\"realm\":\"r\",\"subject\":\"a\",\"reply\":\"x.>\",\"data\":\"\"},\"node_id\":\"n\"}",
      "{\"bus\":{\"realm\":\"r\",\"subject\":\"a\",\"header\":{\"k\":1},\"data\":\"\"},\"node_id\":\"n\"}",
      "{\"bus\":{\"realm\":\"r\",\"subject\":\"a\",\"header\":[],\"data\":\"\"},\"node_id\":\"n\"}",
      "{\"bus\":{\"realm\":\"r\",\"subject\":\"a\",\"data\":\"\",\"queues\":[[\"a\"]]},\"node_id\":\"n\"}",
      "{\"bus\":{\"realm\":\"r\",\"subject\":\"a\",\"data\":\"\",\"queues\":[[\"a\",\"\"]]},\"node_id\":\"n\"}",
      "{\"bus\":{\"realm\":\"r\",\"subject\":\"a\",\"data\":\"\",\"queues\":[[\"a..\",\"g\"]]},\"node_id\":\"n\"}",
      "{\"bus\":{\"realm\":\"r\",\"subject\":\"a\",\"data\":\"\",\"queues\":{}},\"node_id\":\"n\"}",
      "{\"bus\":{\"realm\":\"r\",\"subject\":\"a\",\"data\":\"\"},\"node_id\":\"n\"",  // truncated
  };
  for (const char* text : bad) EXPECT_FALSE(decode_bus_relay(text, 1 << 20)) << text;
  // More queue groups than a relay names, and deep nesting, are refused without recursion.
  std::string many = "{\"bus\":{\"realm\":\"r\",\"subject\":\"a\",\"data\":\"\",\"queues\":[";
  for (size_t i = 0; i <= kMaxRelayedQueues; ++i) many += i ? ",[\"a\",\"g\"]" : "[\"a\",\"g\"]";
  many += "]},\"node_id\":\"n\"}";
  EXPECT_FALSE(decode_bus_relay(many, 1 << 20));
  std::string deep = "{\"bus\":{\"realm\":\"r\",\"subject\":\"a\",\"data\":\"\",\"x\":" + std::string(100000, '[') +
                     std::string(100000, ']') + "},\"node_id\":\"n\"}";
  EXPECT_FALSE(decode_bus_relay(deep, 1 << 20));
}

}  // namespace
}  // namespace siomq::cluster
