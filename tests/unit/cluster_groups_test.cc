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
  EXPECT_EQ(group_terms(r), std::vector<std::string>{"g7:workersp-job"});
  r.disconnect(e);
  EXPECT_TRUE(group_terms(r).empty());
  auto back = std::make_shared<FakeEndpoint>("s2");
  r.register_consumer("w1", "w1", back);
  EXPECT_EQ(group_terms(r), std::vector<std::string>{"g7:workersp-job"});
  // Moved to another group, then out of groups, then gone.
  r.subscribe(grouped("p", "job", "w1", "other"), back);
  EXPECT_EQ(group_terms(r), std::vector<std::string>{"g5:otherp-job"});
  r.subscribe(grouped("p", "job", "w1", std::nullopt), back);
  EXPECT_TRUE(group_terms(r).empty());
  r.subscribe(grouped("p", "job", "w1", "workers"), back);
  r.unsubscribe("p-job", "w1");
  EXPECT_TRUE(group_terms(r).empty());
  // Any bytes in a group's name; its length says where the key starts.
  const std::string odd("a:b\x1f" "7:");  // 6 bytes
  r.subscribe(grouped("p", "job", "w1", odd), back);
  const std::vector<std::string> terms = group_terms(r);
  EXPECT_EQ(terms, std::vector<std::string>{"g6:" + odd + "p-job"});
  ASSERT_EQ(terms.size(), 1u);
  auto parsed = parse_group_interest_term(std::string_view(terms[0]).substr(1));
  ASSERT_TRUE(parsed);
  EXPECT_EQ(parsed->first, odd);
  EXPECT_EQ(parsed->second, "p-job");
  for (const char* bad : {"", "x", ":a", "5:abc", "12345:a", "1a:b"}) EXPECT_FALSE(parse_group_interest_term(bad)) << bad;
  r.unsubscribe("p-job", "w1");
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
  // Turns the relay could not take stay with node A's members, without a second ungrouped copy.
  a.subscribe(grouped("p", "job", "plain", std::nullopt), a1);
  std::vector<std::string> workers{"workers"};
  RealmRegistry::GroupScope back;
  back.only = &workers;
  back.groups_only = true;
  auto kept = a.route("job", "p", back);
  ASSERT_EQ(kept.size(), 1u);
  EXPECT_EQ(kept[0].consumer, "x");
}

}  // namespace
}  // namespace siomq::broker
