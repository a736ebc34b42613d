// The live tyo-mq registry of one realm (protocol §2, §4): producer and consumer names bound to
// endpoints, subscriptions by key, the topic index, group counters — and the routing and presence
// rules over them. Not thread-safe: the Broker hands it out under the realm's lock. It decides who gets
// what (Route, Notice) and formats nothing: the endpoints' surfaces shape deliveries and presence
// events on their wires. It holds endpoints by shared_ptr while names are bound to them.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "broker/endpoint.h"
#include "broker/interest_ledger.h"
#include "broker/peer_presence.h"
#include "broker/remote_groups.h"
#include "broker/subject_index.h"
#include "broker/sublist.h"
#include "wire/subscription_key.h"

namespace siomq::broker {

// The subscription keys of protocol §4.1 (wire/subscription_key.h).
using tyo_mq::kAllEventsSuffix;
using tyo_mq::kAnyProducer;
using tyo_mq::lower;
using tyo_mq::subscription_key;

// How a subscription's stored copies are delivered (§5.2): ACK mode, its deadline and the retries.
struct DeliveryPolicy {
  bool ack = false;
  int64_t ack_timeout_ms = 30000;
  int max_attempts = 3;
  int64_t retry_delay_ms = 5000;
  bool exponential = false;  // delay(n) = retry_delay_ms * 2^(n-1)
  bool operator==(const DeliveryPolicy&) const = default;
};

struct SubscribeSpec {
  std::string event;
  std::string producer;
  std::string consumer;
  std::string id;           // consumer id
  std::string consumer_id;  // durable queue key
  bool topic = false;
  std::optional<std::string> group;
  bool durable = false;
  DeliveryPolicy policy;
};


// One routed copy of a message: deliver on CONSUME-<key> to `endpoint`, or store it in the queue
// (realm, key, consumer_id) as §5.1 says.
struct Route {
  std::string key;
  std::string consumer;
  EndpointPtr endpoint;  // null when the consumer is offline
  std::string realm;     // the realm whose subscription matched ("*" for mirrored copies)
  std::string consumer_id;
  bool durable = false;
  DeliveryPolicy policy;
};

class RealmRegistry {
 public:
  RealmRegistry();

  // PRODUCER (§3.1): binds `name` to the endpoint; returns the presence events to send.
  // `default_ttl_ms` (nullopt: keep what it had) is the producer's TTL for stored copies (§5.5).
  std::vector<Notice> register_producer(const std::string& name, const std::string& id, const EndpointPtr& endpoint,
                                        std::optional<int64_t> default_ttl_ms = std::nullopt);
  // CONSUMER (§3.2). Returns nullopt when the name is bound to another live connection (duplicate).
  std::optional<std::vector<Notice>> register_consumer(const std::string& name, const std::string& id,
                                                       const EndpointPtr& endpoint);
  // SUBSCRIBE (§3.3): creates or overwrites the (key, consumer) subscription. Returns the key and the
  // presence events.
  std::pair<std::string, std::vector<Notice>> subscribe(const SubscribeSpec& spec, const EndpointPtr& endpoint);
  // A durable subscription read back from the store (at start-up, or adopted from another node): its
  // consumer is offline until it connects again, unless it is online here. One the consumer holds under
  // that key already (made here since) is newer and stays as it is.
  void restore(const SubscribeSpec& spec);
  // UNSUBSCRIBE (§0 row 4): removes the subscription; returns what it was, nullopt if there was none.
  std::optional<SubscribeSpec> unsubscribe(const std::string& key, const std::string& consumer);
  // A consumer's durable subscriptions, removed (its queues move to another node): what they were.
  // O(keys of the realm): moves are rare.
  std::vector<SubscribeSpec> take_durable(const std::string& consumer);
  // UNSUBSCRIBE by key alone: removes that key's subscriptions of every consumer bound to `endpoint`.
  std::vector<SubscribeSpec> unsubscribe_all_of(const std::string& key, const EndpointPtr& endpoint);
  // How many subscriptions the consumer name holds, under every key.
  size_t subscriptions_of(const std::string& consumer) const;
  // Whether the consumer holds a durable subscription under any key (O(keys of the realm)).
  bool has_durable(const std::string& consumer) const;
  // The connection of a consumer name, null when it is offline.
  EndpointPtr consumer_endpoint(const std::string& consumer) const;
  // Whether `name` is a producer or consumer name bound, online, to `endpoint` (E2EE: an identity a
  // connection may publish keys for).
  bool bound_to(const std::string& name, const EndpointPtr& endpoint) const;
  // A producer's default TTL (PRODUCER's `default_ttl`, §5.5) in ms; nullopt when it has none.
  std::optional<int64_t> producer_default_ttl(const std::string& producer) const;
  // PRODUCE (§3.5's `from`): a producer name with no live connection is bound to this one, silently. A
  // name the realm does not know yet is added only while the realm holds fewer than `name_room` names
  // (the caps on names apply to PRODUCE too); returns whether it was added.
  bool bind_sender(const std::string& name, const std::optional<std::string>& id, const EndpointPtr& endpoint,
                   size_t name_room = SIZE_MAX);
  // Routing of PRODUCE {event, from} (§4.2, §4.4, §4.5): every copy to deliver, in order. Without
  // `with_groups`, grouped subscriptions are skipped (a message relayed from another node: its origin
  // picked the group's member).
  std::vector<Route> route(std::string_view event, std::string_view from, bool with_groups = true);
  // In a cluster (docs/scale-out.md "Consumer groups"). `remote`: the other nodes' online group members in
  // this realm; a group's turn may go to one of them (appended to `picks`) instead of a member here.
  // `only`: a message another node relayed naming these groups: delivered to one member of each here.
  struct GroupScope {
    const RemoteGroups::ByKey* remote = nullptr;
    std::vector<RemoteGroupPick>* picks = nullptr;
    const std::vector<std::string>* only = nullptr;
    bool groups_only = false;  // with `only`: no ungrouped copy (turns the relay could not take back)
  };
  std::vector<Route> route(std::string_view event, std::string_view from, const GroupScope& scope);
  // Broadcast to the realm (§4.6): every live connection bound to a producer or consumer name, once each.
  std::vector<EndpointPtr> members() const;
  // Broadcast to group `group` (§4.6): per distinct consumer name, its first subscription in that group.
  std::vector<Route> group_members(const std::string& group) const;
  // The connection went away: every name bound to it goes offline (§0 row 5); returns the presence events.
  std::vector<Notice> disconnect(const EndpointPtr& endpoint);

  // Idle eviction (§11.2 with §0 row 6): names offline for longer than `ttl_ms` are forgotten with their
  // non-durable subscriptions, and so are the non-durable subscriptions naming such a producer. Durable
  // subscriptions (and a consumer name that still has one) stay. Returns the names forgotten.
  size_t evict_idle(int64_t now_ms, int64_t ttl_ms);
  // Forgets the consumer name at once when it is offline and has no subscription left; returns whether
  // it did. For names nobody connects under again (an ended SSE stream's): a client that opens and
  // closes streams must not leave a name per stream until idle eviction.
  bool forget_consumer(const std::string& name);

  // What /api/stats and the `stats` command show of a realm.
  struct Counts {
    size_t producers = 0, producers_online = 0, consumers = 0, consumers_online = 0, keys = 0;
  };
  Counts counts() const;
  // Who is in the realm, for the web console (broker/realm_view.cc): names sorted, at most `limit`
  // producers, `limit` consumers and `limit` subscriptions in all. O(names + subscriptions of the realm),
  // so it is asked for one realm at a time.
  struct ClientView {
    std::string name;
    bool online = false;
  };
  struct ConsumerView {
    std::string name;
    bool online = false;
    std::vector<std::pair<std::string, SubscribeSpec>> subscriptions;  // (key, as last subscribed)
  };
  struct Clients {
    std::vector<ClientView> producers;
    std::vector<ConsumerView> consumers;
    bool truncated = false;  // some were left out by `limit`
  };
  Clients clients(size_t limit) const;

  // Nothing bound, nothing subscribed: the realm can be forgotten (Broker::reclaim_empty_realms).
  bool empty() const { return producers_.empty() && consumers_.empty() && subscriptions_.empty() && bus_.empty() &&
                                stream_subjects_.empty(); }
  size_t producer_count() const { return producers_.size(); }
  size_t consumer_count() const { return consumers_.size(); }
  // O(1): SUBSCRIBE checks it against the cap. The bus's core subscriptions count too (one cap for both).
  size_t subscription_count() const { return subscription_count_ + bus_.size(); }
  // The bus's core subscriptions in this realm (bus.md §4).
  Sublist& bus() { return bus_; }
  // The subject patterns the realm's streams bind (set by broker::Streams), and whether one binds
  // `subject`: a core `pub` there is captured by the stream (bus.md §8.8). In a cluster they are shared
  // as the bus's interest terms: a `pub` on another node reaches the stream here.
  void set_stream_subjects(const std::vector<std::string>& patterns);
  bool stream_bound(std::string_view subject) const;
  // Round-robin counters kept (one per group name routed to, trimmed as groups go away).
  size_t group_counter_count() const { return group_counters_.size(); }

  // What the realm's subscriptions want from other nodes (the cluster's interest, broker/interest_ledger.h):
  // "=" and a subscription's key, and for a topic subscription also "~" and its lowercased pattern; a term
  // longer than kMaxInterestTermBytes is "*" (the whole realm) instead (cluster/interest.h). Counted only
  // once track_interest() was called (a node in a cluster), at no cost otherwise.
  void track_interest() {
    track_interest_ = true;
    bus_.track_interest();
  }
  static std::vector<std::string> interest_terms(const std::string& key, const SubscribeSpec& spec);
  // The terms that appeared (+1) or went (-1) since the last call, in order.
  std::vector<std::pair<std::string, int>> take_interest_deltas() {
    auto out = std::exchange(interest_deltas_, {});
    bus_.take_interest_deltas(out);
    return out;
  }
  // Every term held now.
  std::vector<std::string> interest_terms() const;

  // Presence across nodes (broker/peer_presence.h; realm_presence.cc), recorded while tracking interest
  // (a node in a cluster): the changes made here since the last call, in order, for the other nodes.
  std::vector<PeerPresence> take_peer_presence() { return std::exchange(peer_presence_, {}); }
  // A change on another node: the presence events this node's clients hear of it. A producer coming
  // online there also gets, in `answers`, the `subscribed` changes to send back (this node's consumers
  // subscribed to it).
  std::vector<Notice> peer_presence(const PeerPresence& change, std::vector<PeerPresence>& answers) const;

 private:
  struct Producer {
    std::string id;
    EndpointPtr endpoint;
    bool online = false;
    int64_t offline_since_ms = 0;  // steady clock
    std::optional<int64_t> default_ttl_ms;
    std::set<std::string> subscribers;  // consumer names
    const Endpoint* announced = nullptr;  // the connection other nodes were last told of (a cluster)
  };
  struct Consumer {
    std::string id;
    EndpointPtr endpoint;
    bool online = false;
    int64_t offline_since_ms = 0;  // steady clock
    std::set<std::string, std::less<>> subscribe_tos;  // producer names as given, case kept
    size_t subscriptions = 0;  // under every key
    const Endpoint* announced = nullptr;  // the connection other nodes were last told of (a cluster)
  };
  struct Subscription {
    uint64_t index_id = 0;
    std::string consumer;
    std::set<std::string> producers;
    std::string pattern;  // lower(event), the topic index's key, when spec.topic
    SubscribeSpec spec;   // as last subscribed: ids, group, durability, policy
  };
  struct Candidate {
    const std::string* key;
    const Subscription* sub;
  };

  bool online(const std::string& consumer) const;
  void count_interest(const std::string& term, int delta);
  void count_interest(const std::string& key, const SubscribeSpec& spec, int delta);
  void set_group_interest(const std::string& consumer, const std::string& key, const std::optional<std::string>& group);
  void count_group_interest(const std::string& consumer, int delta);
  Subscription& upsert(const std::string& key, const SubscribeSpec& spec);
  Route route_to(const std::string& key, const Subscription& s) const;
  void record_peer_presence(PeerPresence change);
  void record_peer_presence(PeerPresence::Kind kind, const std::string& consumer, const std::string& socket,
                            const Consumer& c);
  std::map<std::string, std::vector<std::string>> keys_naming(const std::string& producer) const;
  // The keys under which the consumer holds a durable subscription (O(keys of the realm)).
  std::vector<std::string> durable_keys(const std::string& consumer) const;
  void trim_group_counters();
  Notice subscribe_to_notice(const Producer& producer, const std::string& consumer, const std::vector<std::string>& keys);
  static Notice subscribed_notice(const Producer& producer, const std::string& consumer, const std::string& socket,
                                  const std::string& id, const std::vector<std::string>& keys, bool online);
  static Notice link_notice(Presence::Kind kind, const EndpointPtr& to, const std::string& to_id, bool peer_is_producer,
                            const std::string& name, const std::string& socket, const std::string& peer_id = {});

  std::unordered_map<std::string, Producer> producers_;
  std::unordered_map<std::string, Consumer> consumers_;
  // One key's subscriptions, one per consumer name: in the order they were made (index ids grow), and
  // found by consumer name in O(1), so a key shared by many consumers costs nothing per SUBSCRIBE.
  struct KeySubscriptions {
    std::map<uint64_t, Subscription> in_order;  // by index_id
    std::unordered_map<std::string, uint64_t> by_consumer;
    Subscription* find(const std::string& consumer);
  };
  std::map<std::string, KeySubscriptions, std::less<>> subscriptions_;
  SubjectIndex topics_{kMqttSyntax};
  Sublist bus_;
  SubjectIndex stream_subjects_{kNatsSyntax};
  std::vector<std::string> stream_patterns_;  // as set, for their interest terms
  std::unordered_map<uint64_t, std::pair<std::string, std::string>> topic_subs_;  // index id -> (key, consumer)
  std::unordered_map<std::string, uint64_t> group_counters_;
  size_t trim_counters_at_ = 1024;  // group_counters_ is trimmed to its live groups past this size
  uint64_t next_index_id_ = 1;
  size_t subscription_count_ = 0;
  bool track_interest_ = false;
  std::unordered_map<std::string, size_t> interest_;  // term -> subscriptions naming it
  std::vector<std::pair<std::string, int>> interest_deltas_;
  // consumer -> key -> group of its exact grouped subscriptions (tracked in a cluster only).
  std::unordered_map<std::string, std::map<std::string, std::string>> grouped_;
  std::vector<PeerPresence> peer_presence_;
};

}  // namespace siomq::broker
