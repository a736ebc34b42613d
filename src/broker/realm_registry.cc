#include "broker/realm_registry.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <unordered_set>
#include <utility>

#include "wire/clock.h"

namespace siomq::broker {
RealmRegistry::RealmRegistry() = default;

RealmRegistry::Subscription* RealmRegistry::KeySubscriptions::find(const std::string& consumer) {
  auto it = by_consumer.find(consumer);
  return it == by_consumer.end() ? nullptr : &in_order.at(it->second);
}

bool RealmRegistry::online(const std::string& consumer) const {
  auto it = consumers_.find(consumer);
  return it != consumers_.end() && it->second.online && it->second.endpoint;
}

EndpointPtr RealmRegistry::consumer_endpoint(const std::string& consumer) const {
  auto it = consumers_.find(consumer);
  return it != consumers_.end() && it->second.online ? it->second.endpoint : nullptr;
}

bool RealmRegistry::bound_to(const std::string& name, const EndpointPtr& endpoint) const {
  if (!endpoint) return false;
  auto c = consumers_.find(name);
  if (c != consumers_.end() && c->second.online && c->second.endpoint == endpoint) return true;
  auto p = producers_.find(name);
  return p != producers_.end() && p->second.online && p->second.endpoint == endpoint;
}

Notice RealmRegistry::subscribe_to_notice(const Producer& producer, const std::string& consumer,
                                          const std::vector<std::string>& keys) {
  const Consumer& c = consumers_[consumer];
  return subscribed_notice(producer, consumer, c.endpoint ? c.endpoint->socket_id() : std::string(), c.id, keys, c.online);
}

// A producer hears that a consumer (here, or on another node) subscribed to it under `keys`.
Notice RealmRegistry::subscribed_notice(const Producer& producer, const std::string& consumer, const std::string& socket,
                                        const std::string& id, const std::vector<std::string>& keys, bool online) {
  Presence p;
  p.kind = Presence::Kind::subscribed;
  p.to_id = producer.id;
  p.name = consumer;
  p.peer_socket = socket;
  p.peer_id = id;
  p.keys = keys;
  p.online = online;
  return {producer.endpoint, std::move(p)};
}

// A peer of the recipient came online or went offline.
Notice RealmRegistry::link_notice(Presence::Kind kind, const EndpointPtr& to, const std::string& to_id,
                                  bool peer_is_producer, const std::string& name, const std::string& socket,
                                  const std::string& peer_id) {
  Presence p;
  p.kind = kind;
  p.to_id = to_id;
  p.name = name;
  p.peer_is_producer = peer_is_producer;
  p.peer_socket = socket;
  p.peer_id = peer_id;
  return {to, std::move(p)};
}

std::vector<Notice> RealmRegistry::register_producer(const std::string& name, const std::string& id,
                                             const EndpointPtr& endpoint, std::optional<int64_t> default_ttl_ms) {
  std::vector<Notice> out;
  Producer& p = producers_[name];
  // Other nodes hear of a registration once per connection and id (a client registering again and again
  // costs them nothing).
  const bool change = p.announced != endpoint.get() || p.id != id;
  p.announced = endpoint.get();
  if (default_ttl_ms) p.default_ttl_ms = default_ttl_ms;
  if (!p.id.empty() && p.id != id && p.online && p.endpoint && p.endpoint != endpoint)
    out.push_back(link_notice(Presence::Kind::replaced, p.endpoint, p.id, true, name, {}));
  p.id = id;
  p.endpoint = endpoint;
  p.online = true;
  // Every consumer subscribed to this producer hears of it, with the keys it subscribed under.
  for (const auto& [consumer, keys] : keys_naming(name)) {
    p.subscribers.insert(consumer);
    out.push_back(subscribe_to_notice(p, consumer, keys));
    if (EndpointPtr c = consumer_endpoint(consumer)) {
      out.push_back(link_notice(Presence::Kind::connected, c, consumers_[consumer].id, true, name,
                                endpoint->socket_id()));
    }
  }
  if (track_interest_ && change)
    record_peer_presence({PeerPresence::Kind::producer_online, name, endpoint->socket_id(), {}, {}, {}, true});
  return out;
}

std::optional<std::vector<Notice>> RealmRegistry::register_consumer(const std::string& name, const std::string& id,
                                                            const EndpointPtr& endpoint) {
  Consumer& c = consumers_[name];
  if (c.online && c.endpoint && c.endpoint != endpoint) return std::nullopt;
  const bool change = c.announced != endpoint.get() || c.id != id;
  c.announced = endpoint.get();
  if (track_interest_ && !c.online) count_group_interest(name, +1);
  c.id = id;
  c.endpoint = endpoint;
  c.online = true;
  std::vector<Notice> out;
  for (const auto& producer : c.subscribe_tos) {
    auto it = producers_.find(producer);
    if (it == producers_.end() || !it->second.online || !it->second.endpoint) continue;
    out.push_back(link_notice(Presence::Kind::connected, it->second.endpoint, it->second.id, false, name,
                              endpoint->socket_id(), id));
  }
  if (track_interest_ && change) record_peer_presence(PeerPresence::Kind::consumer_online, name, endpoint->socket_id(), c);
  return out;
}

std::pair<std::string, std::vector<Notice>> RealmRegistry::subscribe(const SubscribeSpec& spec, const EndpointPtr& endpoint) {
  std::string key = subscription_key(spec.producer, spec.event);
  auto existing = subscriptions_.find(key);
  const bool fresh = existing == subscriptions_.end() || !existing->second.find(spec.consumer);
  // A consumer name with no live connection is bound to this one, without the duplicate check.
  Consumer& c = consumers_[spec.consumer];
  if (!c.online || !c.endpoint) {
    if (track_interest_ && !c.online) count_group_interest(spec.consumer, +1);
    c.endpoint = endpoint;
    c.online = true;
    if (c.id.empty()) c.id = spec.id;
  }
  upsert(key, spec);

  std::vector<Notice> out;
  auto announce = [&](Producer& p) {
    p.subscribers.insert(spec.consumer);
    Notice n = subscribe_to_notice(p, spec.consumer, {key});
    out.push_back(std::move(n));
  };
  bool here = false;  // the producer is online on this node
  if (spec.producer != kAnyProducer) {
    auto p = producers_.find(spec.producer);
    here = p != producers_.end() && p->second.online && p->second.endpoint;
    if (here) announce(p->second);
  } else {
    for (auto& [name, p] : producers_) {
      if (name != spec.consumer && p.online && p.endpoint) announce(p);
    }
  }
  // A producer online on another node hears of it there (TYO-MQ-ALL: every producer, wherever it is), once
  // per subscription.
  if (track_interest_ && !here && fresh) {
    const Consumer& cs = consumers_[spec.consumer];
    PeerPresence change{PeerPresence::Kind::subscribed, spec.consumer, cs.endpoint ? cs.endpoint->socket_id() : std::string(),
                        cs.id, spec.producer, {key}, cs.online};
    record_peer_presence(std::move(change));
  }
  return {key, std::move(out)};
}

RealmRegistry::Subscription& RealmRegistry::upsert(const std::string& key, const SubscribeSpec& spec) {
  Consumer& consumer = consumers_[spec.consumer];
  consumer.subscribe_tos.insert(spec.producer);
  auto& subs = subscriptions_[key];
  Subscription* found = subs.find(spec.consumer);
  const bool fresh = !found;
  if (!found) {
    ++consumer.subscriptions;
    uint64_t id = next_index_id_++;
    found = &subs.in_order[id];
    found->index_id = id;
    found->consumer = spec.consumer;
    subs.by_consumer.emplace(spec.consumer, id);
    ++subscription_count_;
  }
  Subscription& s = *found;
  if (track_interest_) {
    // The key term stays with the subscription; only a change of mode moves its pattern term.
    if (fresh) {
      count_interest(key, spec, +1);
    } else if (s.spec.topic != spec.topic) {
      count_interest(key, s.spec, -1);
      count_interest(key, spec, +1);
    }
  }
  if (s.spec.topic) topics_.erase(s.pattern, s.index_id);
  s.producers.insert(spec.producer);
  if (track_interest_) set_group_interest(spec.consumer, key, spec.topic ? std::nullopt : spec.group);
  s.spec = spec;
  if (s.spec.topic) {
    s.pattern = lower(spec.event);
    topics_.insert(s.pattern, s.index_id);
    topic_subs_[s.index_id] = {key, spec.consumer};
  } else {
    topic_subs_.erase(s.index_id);
  }
  return s;
}

// Every subscription is found by its key (the router looks up three keys a message makes: a topic
// subscription too, e.g. one to event "TM-ALL", or one whose key another producer's name makes); a topic
// one also by its pattern. A term too long to share stands for the whole realm ("*").
std::vector<std::string> RealmRegistry::interest_terms(const std::string& key, const SubscribeSpec& spec) {
  auto bounded = [](std::string term) { return term.size() > kMaxInterestTermBytes ? std::string("*") : term; };
  std::vector<std::string> out{bounded("=" + key)};
  if (spec.topic) out.push_back(bounded("~" + lower(spec.event)));
  return out;
}

void RealmRegistry::count_interest(const std::string& key, const SubscribeSpec& spec, int delta) {
  for (const auto& term : interest_terms(key, spec)) count_interest(term, delta);
}

void RealmRegistry::count_interest(const std::string& term, int delta) {
  if (delta > 0) {
    if (interest_[term]++ == 0) interest_deltas_.emplace_back(term, +1);
    return;
  }
  auto it = interest_.find(term);
  if (it == interest_.end()) return;
  if (--it->second == 0) {
    interest_.erase(it);
    interest_deltas_.emplace_back(term, -1);
  }
}

// A consumer group's members across nodes (docs/scale-out.md "Consumer groups"): a term naming the group
// and the key (group_interest_term), for each exact grouped subscription of an online consumer (a topic subscription's
// group stays on its node). A term too long to share is not shared: that group stays on its node.
void RealmRegistry::set_group_interest(const std::string& consumer, const std::string& key,
                                       const std::optional<std::string>& group) {
  auto c = consumers_.find(consumer);
  const bool online = c != consumers_.end() && c->second.online;
  auto& mine = grouped_[consumer];
  auto it = mine.find(key);
  if (it != mine.end()) {
    if (group && it->second == *group) return;
    if (auto term = group_interest_term(it->second, key); term && online) count_interest(*term, -1);
    mine.erase(it);
  }
  if (group) {
    mine.emplace(key, *group);
    if (auto term = group_interest_term(*group, key); term && online) count_interest(*term, +1);
  }
  if (mine.empty()) grouped_.erase(consumer);
}

void RealmRegistry::count_group_interest(const std::string& consumer, int delta) {
  auto it = grouped_.find(consumer);
  if (it == grouped_.end()) return;
  for (const auto& [key, group] : it->second) {
    if (auto term = group_interest_term(group, key)) count_interest(*term, delta);
  }
}

std::vector<std::string> RealmRegistry::interest_terms() const {
  std::vector<std::string> out;
  out.reserve(interest_.size());
  for (const auto& [term, count] : interest_) out.push_back(term);
  bus_.interest_terms(out);
  return out;
}

void RealmRegistry::restore(const SubscribeSpec& spec) {
  const std::string key = subscription_key(spec.producer, spec.event);
  if (auto it = subscriptions_.find(key); it != subscriptions_.end() && it->second.by_consumer.count(spec.consumer))
    return;  // made again here meanwhile: that one is newer
  Consumer& c = consumers_[spec.consumer];
  if (c.id.empty()) c.id = spec.id;
  if (!c.online) c.offline_since_ms = steady_ms();
  upsert(key, spec);
}

size_t RealmRegistry::subscriptions_of(const std::string& consumer) const {
  auto it = consumers_.find(consumer);
  return it == consumers_.end() ? 0 : it->second.subscriptions;
}

std::vector<std::string> RealmRegistry::durable_keys(const std::string& consumer) const {
  std::vector<std::string> keys;
  for (const auto& [key, subs] : subscriptions_) {
    auto it = subs.by_consumer.find(consumer);
    if (it != subs.by_consumer.end() && subs.in_order.at(it->second).spec.durable) keys.push_back(key);
  }
  return keys;
}

bool RealmRegistry::has_durable(const std::string& consumer) const { return !durable_keys(consumer).empty(); }

std::vector<SubscribeSpec> RealmRegistry::take_durable(const std::string& consumer) {
  std::vector<SubscribeSpec> out;
  for (const auto& key : durable_keys(consumer)) {
    if (auto spec = unsubscribe(key, consumer)) out.push_back(std::move(*spec));
  }
  return out;
}

std::optional<SubscribeSpec> RealmRegistry::unsubscribe(const std::string& key, const std::string& consumer) {
  auto it = subscriptions_.find(key);
  if (it == subscriptions_.end()) return std::nullopt;
  auto& subs = it->second;
  Subscription* s = subs.find(consumer);
  if (!s) return std::nullopt;
  if (s->spec.topic) {
    topics_.erase(s->pattern, s->index_id);
    topic_subs_.erase(s->index_id);
  }
  SubscribeSpec spec = std::move(s->spec);
  if (track_interest_) {
    count_interest(key, spec, -1);
    set_group_interest(consumer, key, std::nullopt);
  }
  subs.by_consumer.erase(consumer);
  subs.in_order.erase(s->index_id);
  --subscription_count_;
  if (auto c = consumers_.find(consumer); c != consumers_.end() && c->second.subscriptions) --c->second.subscriptions;
  if (subs.in_order.empty()) subscriptions_.erase(it);
  return spec;
}

std::vector<SubscribeSpec> RealmRegistry::unsubscribe_all_of(const std::string& key, const EndpointPtr& endpoint) {
  std::vector<SubscribeSpec> out;
  auto it = subscriptions_.find(key);
  if (it == subscriptions_.end()) return out;
  std::vector<std::string> mine;
  for (const auto& [order, s] : it->second.in_order) {
    auto c = consumers_.find(s.consumer);
    if (c != consumers_.end() && c->second.endpoint == endpoint) mine.push_back(s.consumer);
  }
  for (const auto& consumer : mine) {
    if (auto spec = unsubscribe(key, consumer)) out.push_back(std::move(*spec));
  }
  return out;
}

std::optional<int64_t> RealmRegistry::producer_default_ttl(const std::string& producer) const {
  auto it = producers_.find(producer);
  return it == producers_.end() ? std::nullopt : it->second.default_ttl_ms;
}

Route RealmRegistry::route_to(const std::string& key, const Subscription& s) const {
  return Route{key, s.consumer, consumer_endpoint(s.consumer), {}, s.spec.consumer_id, s.spec.durable, s.spec.policy};
}

bool RealmRegistry::bind_sender(const std::string& name, const std::optional<std::string>& id, const EndpointPtr& endpoint,
                        size_t name_room) {
  auto it = producers_.find(name);
  bool fresh = it == producers_.end();
  if (fresh) {
    if (producers_.size() + consumers_.size() >= name_room) return false;
    it = producers_.try_emplace(name).first;
  }
  Producer& p = it->second;
  if (p.online && p.endpoint) return false;
  p.endpoint = endpoint;
  p.online = true;
  if (id) p.id = *id;
  return fresh;
}

std::vector<Route> RealmRegistry::route(std::string_view event, std::string_view from, bool with_groups) {
  GroupScope scope;
  static const std::vector<std::string> none;
  if (!with_groups) scope.only = &none;
  return route(event, from, scope);
}

std::vector<Route> RealmRegistry::route(std::string_view event, std::string_view from, const GroupScope& scope) {
  // The three keys a message is routed by, built in this thread's buffers (no allocation per message).
  thread_local std::string keys[3];
  thread_local std::vector<Candidate> candidates;
  tyo_mq::assign_subscription_key(keys[0], from, event);
  keys[1].clear();
  tyo_mq::append_lower(keys[1], from);
  keys[1].append(kAllEventsSuffix);
  keys[2].assign("tyo-mq-all-");
  tyo_mq::append_lower(keys[2], event);
  candidates.clear();
  // A key the message makes twice is looked up once.
  auto repeated = [&](int k) {
    return (k == 1 && keys[1] == keys[0]) || (k == 2 && (keys[2] == keys[0] || keys[2] == keys[1]));
  };
  for (int k = 0; k < 3; ++k) {
    if (repeated(k)) continue;
    auto it = subscriptions_.find(keys[k]);
    if (it == subscriptions_.end()) continue;
    for (const auto& [order, s] : it->second.in_order) {
      // The reference checks the consumer-level producer set, case-sensitively (§4.2).
      auto c = consumers_.find(s.consumer);
      if (c == consumers_.end()) continue;
      const auto& tos = c->second.subscribe_tos;
      if (tos.count(kAnyProducer) || tos.count(from)) candidates.push_back({&it->first, &s});
    }
  }
  if (!topics_.empty()) {
    std::vector<SubjectIndex::Id> ids;
    topics_.match(lower(event), ids);
    std::sort(ids.begin(), ids.end());  // creation order, as the reference walks its patterns
    ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
    for (auto id : ids) {
      auto ts = topic_subs_.find(id);
      if (ts == topic_subs_.end()) continue;
      const std::string& key = ts->second.first;
      if (key == keys[0] || key == keys[1] || key == keys[2]) continue;  // the exact pass had it
      auto it = subscriptions_.find(key);
      if (it == subscriptions_.end()) continue;
      auto s = it->second.in_order.find(id);
      if (s != it->second.in_order.end()) candidates.push_back({&it->first, &s->second});
    }
  }

  std::vector<Route> out;
  out.reserve(candidates.size());
  // Groups in order of first appearance, found by name through a hash index: a realm whose
  // subscriptions are all in distinct groups routes in linear time, not quadratic.
  struct Group {
    std::string_view name;
    std::vector<Candidate> members;
    std::vector<std::string_view> nodes;  // other nodes with an online member (a cluster)
  };
  std::vector<Group> groups;
  std::unordered_map<std::string_view, size_t> group_index;
  auto group_of = [&](std::string_view name) -> Group& {
    auto [g, fresh] = group_index.try_emplace(name, groups.size());
    if (fresh) groups.push_back({name, {}, {}});
    return groups[g->second];
  };
  for (const auto& cand : candidates) {
    if (const auto& group = cand.sub->spec.group) {
      if (scope.only && std::find(scope.only->begin(), scope.only->end(), *group) == scope.only->end()) continue;
      group_of(*group).members.push_back(cand);
      continue;
    }
    if (!scope.groups_only) out.push_back(route_to(*cand.key, *cand.sub));
  }
  if (scope.remote) {
    for (int k = 0; k < 3; ++k) {
      if (repeated(k)) continue;
      auto it = scope.remote->find(keys[k]);
      if (it == scope.remote->end()) continue;
      for (const auto& m : it->second) {
        Group& g = group_of(m.group);
        if (std::find(g.nodes.begin(), g.nodes.end(), m.node) == g.nodes.end()) g.nodes.push_back(m.node);
      }
    }
  }
  // Round-robin among the online members — here, and in a cluster each other node with one counts as one
  // more — or among all of this node's members when none is online anywhere (§4.5).
  for (auto& [group, members, nodes] : groups) {
    std::vector<Candidate> pool;
    for (const auto& m : members) {
      if (online(m.sub->consumer)) pool.push_back(m);
    }
    if (pool.empty() && nodes.empty()) pool = members;
    uint64_t n = ++group_counters_[std::string(group)];
    const size_t turn = (n - 1) % (pool.size() + nodes.size());
    if (turn >= pool.size()) {
      if (scope.picks) scope.picks->push_back({std::string(nodes[turn - pool.size()]), std::string(group)});
      continue;
    }
    out.push_back(route_to(*pool[turn].key, *pool[turn].sub));
  }
  if (group_counters_.size() > trim_counters_at_) trim_group_counters();
  return out;
}

// Group names come and go with subscriptions; a counter outlives its group only until the map has
// doubled (and holds over 1,024), so churn through fresh group names cannot grow it forever. A trim is
// one pass over the subscriptions, paid for by the 1,024 or more new names since the last one.
void RealmRegistry::trim_group_counters() {
  std::unordered_set<std::string_view> live;
  for (const auto& [key, subs] : subscriptions_) {
    for (const auto& [order, s] : subs.in_order) {
      if (s.spec.group) live.insert(*s.spec.group);
    }
  }
  std::erase_if(group_counters_, [&](const auto& entry) { return !live.count(entry.first); });
  trim_counters_at_ = std::max<size_t>(1024, 2 * group_counters_.size());
}

std::vector<EndpointPtr> RealmRegistry::members() const {
  std::vector<EndpointPtr> out;
  std::unordered_set<const Endpoint*> seen;  // a connection bound to many names is sent to once, in linear time
  auto add = [&](const EndpointPtr& e) {
    if (e && seen.insert(e.get()).second) out.push_back(e);
  };
  for (const auto& [name, p] : producers_) {
    if (p.online) add(p.endpoint);
  }
  for (const auto& [name, c] : consumers_) {
    if (c.online) add(c.endpoint);
  }
  return out;
}

std::vector<Route> RealmRegistry::group_members(const std::string& group) const {
  std::vector<Route> out;
  std::set<std::string> seen;
  for (const auto& [key, subs] : subscriptions_) {
    for (const auto& [order, s] : subs.in_order) {
      if (s.spec.group != group || !seen.insert(s.consumer).second) continue;
      if (consumer_endpoint(s.consumer)) out.push_back(route_to(key, s));
    }
  }
  return out;
}

std::vector<Notice> RealmRegistry::disconnect(const EndpointPtr& endpoint) {
  // Every name on the connection goes offline first, so nobody is told about a peer on the same socket.
  std::vector<std::string> gone_producers, gone_consumers;
  const int64_t now = steady_ms();
  for (auto& [name, p] : producers_) {
    if (p.endpoint == endpoint) {
      p.announced = nullptr;
      p.online = false;
      p.endpoint = nullptr;
      p.offline_since_ms = now;
      gone_producers.push_back(name);
    }
  }
  for (auto& [name, c] : consumers_) {
    if (c.endpoint == endpoint) {
      c.announced = nullptr;
      if (track_interest_ && c.online) count_group_interest(name, -1);
      c.online = false;
      c.endpoint = nullptr;
      c.offline_since_ms = now;
      gone_consumers.push_back(name);
    }
  }
  std::vector<Notice> out;
  const std::string& socket = endpoint->socket_id();
  for (const auto& name : gone_producers) {
    for (const auto& consumer : producers_[name].subscribers) {
      if (EndpointPtr c = consumer_endpoint(consumer)) {
        out.push_back(link_notice(Presence::Kind::disconnected, c, consumers_[consumer].id, true, name, socket));
      }
    }
  }
  for (const auto& name : gone_consumers) {
    for (const auto& producer : consumers_[name].subscribe_tos) {
      auto p = producers_.find(producer);
      if (p == producers_.end() || !p->second.online || !p->second.endpoint) continue;
      out.push_back(link_notice(Presence::Kind::disconnected, p->second.endpoint, p->second.id, false, name, socket));
    }
  }
  if (track_interest_) {
    for (const auto& name : gone_producers)
      record_peer_presence({PeerPresence::Kind::producer_offline, name, socket, {}, {}, {}, true});
    for (const auto& name : gone_consumers)
      record_peer_presence(PeerPresence::Kind::consumer_offline, name, socket, consumers_[name]);
  }
  return out;
}

size_t RealmRegistry::evict_idle(int64_t now_ms, int64_t ttl_ms) {
  auto idle = [&](bool online, int64_t since) { return !online && now_ms - since > ttl_ms; };
  // The non-durable subscriptions to drop: of idle consumers, and naming idle producers.
  std::set<std::string> idle_producers;
  for (const auto& [name, p] : producers_) {
    if (idle(p.online, p.offline_since_ms)) idle_producers.insert(name);
  }
  std::vector<std::pair<std::string, std::string>> drop;  // (key, consumer)
  for (const auto& [key, subs] : subscriptions_) {
    for (const auto& [order, s] : subs.in_order) {
      if (s.spec.durable) continue;
      auto c = consumers_.find(s.consumer);
      bool consumer_idle = c == consumers_.end() || idle(c->second.online, c->second.offline_since_ms);
      bool names_idle_producer = std::any_of(s.producers.begin(), s.producers.end(),
                                             [&](const std::string& p) { return idle_producers.count(p) > 0; });
      if (consumer_idle || names_idle_producer) drop.emplace_back(key, s.consumer);
    }
  }
  for (const auto& [key, consumer] : drop) unsubscribe(key, consumer);
  // A consumer name goes when it is idle and nothing durable is left under it.
  std::map<std::string, std::set<std::string>> linked;  // consumer -> producers its subscriptions name
  for (const auto& [key, subs] : subscriptions_) {
    for (const auto& [order, s] : subs.in_order) linked[s.consumer].insert(s.producers.begin(), s.producers.end());
  }
  size_t forgotten = 0;
  for (auto it = consumers_.begin(); it != consumers_.end();) {
    if (idle(it->second.online, it->second.offline_since_ms) && !linked.count(it->first)) {
      for (auto& [name, p] : producers_) p.subscribers.erase(it->first);
      it = consumers_.erase(it);
      ++forgotten;
    } else {
      ++it;
    }
  }
  for (const auto& name : idle_producers) {
    producers_.erase(name);
    ++forgotten;
  }
  // Consumers keep naming only producers that a subscription still links them to.
  for (auto& [name, c] : consumers_) {
    const auto& still = linked[name];
    std::erase_if(c.subscribe_tos, [&](const std::string& p) { return !still.count(p); });
  }
  return forgotten;
}

bool RealmRegistry::forget_consumer(const std::string& name) {
  auto it = consumers_.find(name);
  if (it == consumers_.end() || it->second.online || it->second.subscriptions) return false;
  for (auto& [producer, p] : producers_) p.subscribers.erase(name);
  consumers_.erase(it);
  return true;
}

RealmRegistry::Counts RealmRegistry::counts() const {
  Counts out;
  out.producers = producers_.size();
  out.consumers = consumers_.size();
  for (const auto& [name, p] : producers_) out.producers_online += p.online;
  for (const auto& [name, c] : consumers_) out.consumers_online += c.online;
  out.keys = subscriptions_.size();
  return out;
}

void RealmRegistry::set_stream_subjects(const std::vector<std::string>& patterns) {
  stream_subjects_ = SubjectIndex(kNatsSyntax);
  for (size_t i = 0; i < patterns.size(); ++i) stream_subjects_.insert(patterns[i], i + 1);
  if (track_interest_) {
    for (const auto& p : patterns) count_interest(stream_interest_term(p), +1);
    for (const auto& p : stream_patterns_) count_interest(stream_interest_term(p), -1);
  }
  stream_patterns_ = patterns;
}

bool RealmRegistry::stream_bound(std::string_view subject) const {
  if (stream_subjects_.empty()) return false;
  std::vector<SubjectIndex::Id> ids;
  stream_subjects_.match(subject, ids);
  return !ids.empty();
}

}  // namespace siomq::broker
