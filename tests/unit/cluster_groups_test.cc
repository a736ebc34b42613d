// Consumer groups across nodes (docs/scale-out.md "Consumer groups"): the group terms a realm shares (its
// online members' exact subscriptions), the directory the other nodes build from them, and routing with
// it: every message reaches exactly one member of each group across two nodes, the turns spread over both.
#include <gtest/gtest.h>

#include <map>

#include "broker/realm_registry.h"
#include "cluster/interest.h"
#include "fake_endpoint.h"

namespace siomq::broker {
namespace {

SubscribeSpec grouped(std::string producer, std::string event, std::string consumer, std::optional<std::string> group) {
  SubscribeSpec s;
  s.producer = std::move(producer);
  s.event = std::move(event);
  s.consumer = std::move(consumer);
  s.id = s.consumer;
  s.consumer_id = s.consumer;
  s.group = std::move(group);
  return s;
}

std::vector<std::string> group_terms(const RealmRegistry& r) {
  std::vector<std::string> out;
  for (auto& t : r.interest_terms()) {
    if (t[0] == 'g') out.push_back(t);
  }
  std::sort(out.begin(), out.end());
  return out;
}

// What node A would know of node B: B's terms, as the view reads them from its hash.
std::shared_ptr<const RemoteGroups> directory_of(const RealmRegistry& b) {
  cluster::InterestView view;
  std::vector<std::string> fields;
  for (auto& t : b.interest_terms()) fields.push_back(cluster::interest_field({"r", t}));
  view.replace("node-b", 1, fields);
  return view.take_groups();
}

TEST(ClusterGroups, OnlyOnlineMembersExactSubscriptionsAreShared) {
  RealmRegistry r;
  r.track_interest();
  auto e = std::make_shared<FakeEndpoint>("s1");
  r.subscribe(grouped("p", "job", "w1", "workers"), e);
  SubscribeSpec topic = grouped("p", "a/+", "w1", "topics");
  topic.topic = true;
  r.subscribe(topic, e);  // a topic subscription's group stays here
  r.subscribe(grouped("p", "other", "w1", std::nullopt), e);
  EXPECT_EQ(group_terms(r), std::vector<std::string>{"gworkers\x1fp-job"});
  r.disconnect(e);
  EXPECT_TRUE(group_terms(r).empty());
  auto back = std::make_shared<FakeEndpoint>("s2");
  r.register_consumer("w1", "w1", back);
  EXPECT_EQ(group_terms(r), std::vector<std::string>{"gworkers\x1fp-job"});
  // Moved to another group, then out of groups, then gone.
  r.subscribe(grouped("p", "job", "w1", "other"), back);
  EXPECT_EQ(group_terms(r), std::vector<std::string>{"gother\x1fp-job"});
  r.subscribe(grouped("p", "job", "w1", std::nullopt), back);
  EXPECT_TRUE(group_terms(r).empty());
  r.subscribe(grouped("p", "job", "w1", "workers"), back);
  r.unsubscribe("p-job", "w1");
  EXPECT_TRUE(group_terms(r).empty());
  // A name too long to share: that group stays on its node.
  r.subscribe(grouped("p", "job", "w1", std::string(kMaxInterestTermBytes, 'g')), back);
  EXPECT_TRUE(group_terms(r).empty());
}

TEST(ClusterGroups, EachMessageReachesOneMemberOfEachGroupAcrossTwoNodes) {
  RealmRegistry a, b;
  a.track_interest();
  b.track_interest();
  auto a1 = std::make_shared<FakeEndpoint>("a1"), b1 = std::make_shared<FakeEndpoint>("b1"),
       b2 = std::make_shared<FakeEndpoint>("b2");
  a.subscribe(grouped("p", "job", "x", "workers"), a1);
  b.subscribe(grouped("p", "job", "y", "workers"), b1);
  b.subscribe(grouped("TYO-MQ-ALL", "job", "z", "workers"), b2);
  b.subscribe(grouped("p", "job", "solo", "only-on-b"), b2);
  auto remote = directory_of(b);
  ASSERT_TRUE(remote);
  std::map<std::string, int> got;  // consumer -> deliveries
  const int n = 300;
  for (int i = 0; i < n; ++i) {
    std::vector<RemoteGroupPick> picks;
    RealmRegistry::GroupScope scope;
    scope.remote = remote->realm("r");
    scope.picks = &picks;
    for (const auto& route : a.route("job", "p", scope)) ++got[route.consumer];
    std::vector<std::string> groups;
    for (const auto& pick : picks) {
      EXPECT_EQ(pick.node, "node-b");
      groups.push_back(pick.group);
    }
    if (groups.empty()) continue;
    RealmRegistry::GroupScope there;
    there.only = &groups;
    for (const auto& route : b.route("job", "p", there)) ++got[route.consumer];
  }
  EXPECT_EQ(got["x"] + got["y"] + got["z"], n);
  EXPECT_EQ(got["solo"], n);
  EXPECT_EQ(got["x"], n / 2);  // node A's member, and node B as one
  EXPECT_EQ(got["y"], n / 4);
  EXPECT_EQ(got["z"], n / 4);
  // Without the directory (Redis away, a reference node) each node keeps its own groups' turns.
  std::map<std::string, int> alone;
  for (const auto& route : a.route("job", "p")) ++alone[route.consumer];
  EXPECT_EQ(alone["x"], 1);
  // A relayed message names no group: node B delivers to none of its groups.
  EXPECT_TRUE(b.route("job", "p", false).empty());
}

}  // namespace
}  // namespace siomq::broker
