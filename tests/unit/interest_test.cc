// The interest-based relay's pure parts: what the realms count (RealmRegistry, Broker), what the ledger
// keeps, and what a node holds of the others' (cluster/interest.h), fed by hostile texts too.
#include <gtest/gtest.h>

#include <algorithm>

#include "broker/broker.h"
#include "broker/interest_ledger.h"
#include "cluster/interest.h"
#include "fake_endpoint.h"

namespace siomq {
namespace {

using broker::FakeEndpoint;
using broker::InterestLedger;
using broker::InterestTerm;
using cluster::InterestNote;
using cluster::InterestView;

broker::SubscribeSpec spec(std::string producer, std::string event, std::string consumer, bool topic = false) {
  broker::SubscribeSpec s;
  s.producer = std::move(producer);
  s.event = std::move(event);
  s.consumer = std::move(consumer);
  s.id = s.consumer;
  s.consumer_id = s.consumer;
  s.topic = topic;
  return s;
}

std::vector<std::string> sorted(std::vector<std::string> v) {
  std::sort(v.begin(), v.end());
  return v;
}

std::vector<std::string> present(InterestLedger& ledger) {
  std::vector<std::string> out;
  for (const auto& t : ledger.snapshot()) out.push_back(t.realm + "/" + t.term);
  return sorted(out);
}

std::vector<std::string> targets(const InterestView& view, std::string_view realm, std::string_view producer,
                                 std::string_view event) {
  std::vector<std::string> out;
  view.targets(realm, producer, event, out);
  return sorted(out);
}

TEST(Interest, TheRealmsCountTheirTermsAndTheLedgerSumsThem) {
  InterestLedger ledger;
  int wakes = 0;
  ledger.set_wake([&] { ++wakes; });
  broker::Broker broker;
  broker.track_interest(&ledger);
  auto a = std::make_shared<FakeEndpoint>("a");
  auto b = std::make_shared<FakeEndpoint>("b");
  broker.with_realm("r1", [&](broker::RealmRegistry& r) { r.subscribe(spec("P", "Orders", "c1"), a); });
  broker.with_realm("r1", [&](broker::RealmRegistry& r) { r.subscribe(spec("p", "orders", "c2"), b); });
  broker.with_realm("r1", [&](broker::RealmRegistry& r) { r.subscribe(spec("P", "TM-ALL", "c1"), a); });
  broker.with_realm("r2", [&](broker::RealmRegistry& r) { r.subscribe(spec("TYO-MQ-ALL", "Org/+/cmd", "c3", true), b); });
  EXPECT_EQ(present(ledger),
            (std::vector<std::string>{"r1/=p-TM-ALL", "r1/=p-orders", "r2/=tyo-mq-all-org/+/cmd", "r2/~org/+/cmd"}));
  EXPECT_EQ(wakes, 1);  // once until the cluster looks
  EXPECT_TRUE(ledger.drain()->empty());  // the snapshot folded the changes in

  // One of two subscriptions to the key goes: the term stays; the second goes: it is reported gone.
  broker.with_realm("r1", [&](broker::RealmRegistry& r) { r.unsubscribe(broker::subscription_key("P", "Orders"), "c1"); });
  EXPECT_TRUE(ledger.drain()->empty());
  EXPECT_EQ(wakes, 1);
  broker.with_realm("r1", [&](broker::RealmRegistry& r) { r.unsubscribe(broker::subscription_key("p", "orders"), "c2"); });
  auto changes = *ledger.drain();
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(changes[0].term, (InterestTerm{"r1", "=p-orders"}));
  EXPECT_FALSE(changes[0].present);
  EXPECT_EQ(wakes, 2);

  // A subscription made again over itself as a topic pattern gains its pattern, and loses it back.
  broker.remove_realm("r2");
  broker.with_realm("r2", [&](broker::RealmRegistry& r) { r.subscribe(spec("P", "alerts", "c4"), a); });
  EXPECT_EQ(present(ledger), (std::vector<std::string>{"r1/=p-TM-ALL", "r2/=p-alerts"}));
  broker.with_realm("r2", [&](broker::RealmRegistry& r) { r.subscribe(spec("P", "alerts", "c4", true), a); });
  EXPECT_EQ(present(ledger), (std::vector<std::string>{"r1/=p-TM-ALL", "r2/=p-alerts", "r2/~alerts"}));
  broker.with_realm("r2", [&](broker::RealmRegistry& r) { r.subscribe(spec("P", "alerts", "c4"), a); });
  EXPECT_EQ(present(ledger), (std::vector<std::string>{"r1/=p-TM-ALL", "r2/=p-alerts"}));

  // A removed realm takes its terms along; the same name made again reports its own.
  broker.remove_realm("r2");
  EXPECT_EQ(present(ledger), (std::vector<std::string>{"r1/=p-TM-ALL"}));
  broker.with_realm("r2", [&](broker::RealmRegistry& r) { r.subscribe(spec("P", "x", "c5"), a); });
  EXPECT_EQ(present(ledger), (std::vector<std::string>{"r1/=p-TM-ALL", "r2/=p-x"}));
}

TEST(Interest, ABrokerOutsideAClusterCountsNothing) {
  broker::RealmRegistry realm;
  realm.subscribe(spec("P", "e", "c"), std::make_shared<FakeEndpoint>("a"));
  EXPECT_TRUE(realm.interest_terms().empty());
  EXPECT_TRUE(realm.take_interest_deltas().empty());
}

TEST(Interest, ALedgerTermThatCameAndWentIsReportedAbsent) {
  InterestLedger ledger;
  ledger.report("r", {{"e", +1}});
  ledger.report("r", {{"e", -1}});
  auto changes = *ledger.drain();
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_FALSE(changes[0].present);
  // A realm removed (-1) before the same name's new life reported +1, or after: the sum is right.
  ledger.report("r", {{"e", +1}});
  ledger.report("r", {{"e", +1}});
  ledger.report("r", {{"e", -1}});
  EXPECT_EQ(present(ledger), (std::vector<std::string>{"r/e"}));
}

TEST(Interest, TermsTooLongToShareStandForMore) {
  InterestLedger ledger;
  broker::Broker broker;
  broker.track_interest(&ledger);
  auto a = std::make_shared<FakeEndpoint>("a");
  std::string long_event(broker::kMaxInterestTermBytes, 'e');
  broker.with_realm("r", [&](broker::RealmRegistry& r) { r.subscribe(spec("p", long_event, "c1"), a); });
  broker.with_realm("r", [&](broker::RealmRegistry& r) { r.subscribe(spec("q", long_event, "c1", true), a); });
  EXPECT_EQ(present(ledger), (std::vector<std::string>{"r/*"}));  // counted twice, one term
  broker.with_realm("r", [&](broker::RealmRegistry& r) { r.unsubscribe(broker::subscription_key("p", long_event), "c1"); });
  EXPECT_EQ(present(ledger), (std::vector<std::string>{"r/*"}));
  std::string long_realm(broker::kMaxInterestTermBytes + 1, 'r');
  broker.with_realm(long_realm, [&](broker::RealmRegistry& r) { r.subscribe(spec("p", "e", "c2"), a); });
  EXPECT_EQ(present(ledger), (std::vector<std::string>{"*/*", "r/*"}));
  broker.remove_realm(long_realm);
  EXPECT_EQ(present(ledger), (std::vector<std::string>{"r/*"}));
}

TEST(Interest, TooManyChangesUnreadAskForASnapshot) {
  InterestLedger ledger;
  for (size_t i = 0; i <= InterestLedger::kMaxDirty; ++i) ledger.report("r", {{"=" + std::to_string(i), +1}, {"=" + std::to_string(i), -1}});
  ledger.report("r", {{"=kept", +1}});
  EXPECT_FALSE(ledger.drain());
  EXPECT_EQ(present(ledger), (std::vector<std::string>{"r/=kept"}));
  ledger.report("r", {{"=kept", -1}});
  ASSERT_TRUE(ledger.drain());  // counted again after the snapshot
}

// The property the relay rests on: whenever a realm routes a message to a subscription, the node's
// interest, as another node holds it, sends the message there. Subscriptions and messages drawn from
// names that collide on purpose (dashes, TM-ALL, TYO-MQ-ALL, topic wildcards, case).
TEST(Interest, EveryMessageTheRouterDeliversIsSentToItsNode) {
  const char* producers[] = {"a", "A-b", "a-b", "b", "TYO-MQ-ALL", "tyo-mq-all"};
  const char* events[] = {"c", "b-c", "TM-ALL", "tm-all", "x/y", "x/+", "x/#", "+", "#", "C", "b-C"};
  uint64_t seed = 12345;
  auto next = [&](size_t n) {
    seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<size_t>((seed >> 33) % n);
  };
  for (int round = 0; round < 200; ++round) {
    InterestLedger ledger;
    broker::Broker broker;
    broker.track_interest(&ledger);
    auto a = std::make_shared<FakeEndpoint>("a");
    for (int i = 0, n = 1 + static_cast<int>(next(4)); i < n; ++i) {
      auto s = spec(producers[next(6)], events[next(11)], "c" + std::to_string(next(3)), next(2) == 0);
      std::string realm = next(4) == 0 ? "*" : "r";
      broker.with_realm(realm, [&](broker::RealmRegistry& r) { r.subscribe(s, a); });
    }
    InterestView view;
    std::vector<std::string> fields;
    for (const auto& t : ledger.snapshot()) fields.push_back(cluster::interest_field(t));
    view.replace("node", 1, fields);
    for (const char* from : producers) {
      for (const char* event : events) {
        if (broker.route_relayed("r", event, from).empty()) continue;
        EXPECT_EQ(targets(view, "r", from, event), (std::vector<std::string>{"node"}))
            << "round " << round << ": " << from << " / " << event;
      }
    }
  }
}

TEST(Interest, NotesAndFieldsRoundTrip) {
  std::vector<InterestTerm> add{{"r1", "orders"}, {"re\"alm", "*"}}, remove{{"*", "x"}};
  auto tail = cluster::interest_note_tail(add, remove);
  ASSERT_TRUE(tail);
  auto note = cluster::decode_interest_note(cluster::interest_note_head("n-1") + "7" + *tail, 1 << 20);
  ASSERT_TRUE(note) << note.error().message;
  EXPECT_EQ(note->node_id, "n-1");
  EXPECT_EQ(note->version, 7u);
  EXPECT_FALSE(note->reread);
  EXPECT_EQ(note->add, add);
  EXPECT_EQ(note->remove, remove);
  auto reread = cluster::decode_interest_note(cluster::interest_note_head("n-1") + "8" + cluster::interest_reread_tail(), 1 << 20);
  ASSERT_TRUE(reread);
  EXPECT_TRUE(reread->reread);
  auto field = cluster::decode_interest_field(cluster::interest_field({"r\n1", "é"}));
  ASSERT_TRUE(field);
  EXPECT_EQ(*field, (InterestTerm{"r\n1", "é"}));

  // A change too large for a note is noted as a reread.
  std::vector<InterestTerm> many(5000, InterestTerm{"realm", "an-event-name-of-some-length"});
  EXPECT_FALSE(cluster::interest_note_tail(many, {}));
}

TEST(Interest, HostileNotesAndFieldsAreRefused) {
  for (const char* text : {"", "{", "[]", "{\"node_id\":\"n\"}", "{\"node_id\":\"\",\"version\":1}",
                           "{\"node_id\":\"n\",\"version\":-1}", "{\"node_id\":\"n\",\"version\":1.5}",
                           "{\"node_id\":7,\"version\":1}", "{\"node_id\":\"n\",\"version\":1,\"add\":{}}",
                           "{\"node_id\":\"n\",\"version\":1,\"add\":[[\"r\"]]}",
                           "{\"node_id\":\"n\",\"version\":1,\"add\":[[\"r\",1]]}",
                           "{\"node_id\":\"n\",\"version\":1,\"remove\":[\"r\"]}", "{\"node_id\":\"n\xff\",\"version\":1}"}) {
    EXPECT_FALSE(cluster::decode_interest_note(text, 1 << 20)) << text;
  }
  std::string deep(100000, '[');
  EXPECT_FALSE(cluster::decode_interest_note(deep, 1 << 20));
  EXPECT_FALSE(cluster::decode_interest_note("{\"node_id\":\"n\",\"version\":1}", 10));  // over the size given
  for (const char* text : {"", "v", "[\"r\"]", "[\"r\",\"t\",\"u\"]", "[1,\"t\"]", "{\"r\":\"t\"}", "[\"r\",\"t\""})
    EXPECT_FALSE(cluster::decode_interest_field(text)) << text;
  EXPECT_FALSE(cluster::decode_interest_field("[\"" + std::string(5000, 'r') + "\",\"t\"]"));
}

TEST(Interest, TheViewMatchesAsTheRouterDoes) {
  InterestView view;
  auto field = [](const char* realm, const char* term) { return cluster::interest_field({realm, term}); };
  view.replace("exact", 3, {field("r1", "=shop-placed"), "junk", field("r1", "?unknown")});
  view.replace("all-of-shop", 1, {field("r1", "=shop-TM-ALL")});
  view.replace("any-producer", 1, {field("r1", "=tyo-mq-all-placed")});
  view.replace("topic", 1, {field("r1", "~placed/+")});
  view.replace("mirror", 1, {field("*", "=shop-placed")});
  view.replace("everything", 1, {field("r2", "*")});
  view.replace("nothing", 1, {});
  EXPECT_EQ(targets(view, "r1", "Shop", "PLACED"), (std::vector<std::string>{"all-of-shop", "any-producer", "exact", "mirror"}));
  EXPECT_EQ(targets(view, "r1", "other", "placed"), (std::vector<std::string>{"any-producer"}));
  EXPECT_EQ(targets(view, "r1", "shop", "Placed/EU"), (std::vector<std::string>{"all-of-shop", "topic"}));
  EXPECT_EQ(targets(view, "r1", "shop", "placed/eu/x"), (std::vector<std::string>{"all-of-shop"}));
  EXPECT_EQ(targets(view, "r2", "shop", "placed"), (std::vector<std::string>{"everything", "mirror"}));
  // A producer name with a dash makes the same key as another split: the router finds it, so does this.
  view.replace("dashed", 1, {field("r3", "=a-b-c")});
  EXPECT_EQ(targets(view, "r3", "a", "b-c"), (std::vector<std::string>{"dashed"}));
  EXPECT_EQ(targets(view, "r3", "a-b", "c"), (std::vector<std::string>{"dashed"}));
  EXPECT_EQ(view.size(), 8u);
  view.forget("everything");
  EXPECT_EQ(targets(view, "r2", "x", "y"), (std::vector<std::string>{}));
}

TEST(Interest, NotesFollowTheVersionOrAskForARead) {
  InterestView view;
  InterestNote note{"b", 2, false, {{"r", "=p-e"}, {"r", "~t/#"}}, {}};
  EXPECT_FALSE(view.apply(note));  // unknown node: read it
  view.replace("b", 1, {});
  EXPECT_TRUE(view.apply(note));
  EXPECT_EQ(targets(view, "r", "p", "e"), (std::vector<std::string>{"b"}));
  EXPECT_EQ(targets(view, "r", "q", "t/1"), (std::vector<std::string>{"b"}));
  EXPECT_TRUE(view.apply(note));  // already held
  InterestNote gap{"b", 4, false, {}, {{"r", "=p-e"}}};
  EXPECT_FALSE(view.apply(gap));
  EXPECT_EQ(view.version("b"), 2u);
  InterestNote next{"b", 3, false, {}, {{"r", "=p-e"}, {"r", "~t/#"}}};
  EXPECT_TRUE(view.apply(next));
  EXPECT_EQ(targets(view, "r", "p", "e"), (std::vector<std::string>{}));
  EXPECT_EQ(targets(view, "r", "q", "t/1"), (std::vector<std::string>{}));
  EXPECT_FALSE(view.apply(InterestNote{"b", 4, true, {}, {}}));  // a reread note always reads
  // A read older than what notes brought is not taken.
  view.replace("b", 2, {cluster::interest_field({"r", "=p-old"})});
  EXPECT_EQ(targets(view, "r", "p", "old"), (std::vector<std::string>{}));
}

TEST(Interest, APeerPastTheCapIsSentEverything) {
  InterestView view;
  std::vector<std::string> fields;
  for (size_t i = 0; i <= cluster::kMaxPeerTerms; ++i) fields.push_back(cluster::interest_field({"r", "=p-" + std::to_string(i)}));
  view.replace("big", 1, fields);
  EXPECT_EQ(targets(view, "another-realm", "anyone", "anything"), (std::vector<std::string>{"big"}));
}

}  // namespace
}  // namespace siomq
