// RealmRegistry's part in presence across nodes (broker/peer_presence.h): what it records of its own
// changes for the other nodes, and what another node's change means for its clients. The events are
// those a peer on this node would cause (realm_registry.cc, tyo-mq §4.7), with the peer's socket id.
#include <spdlog/spdlog.h>

#include "broker/realm_registry.h"

namespace siomq::broker {

void RealmRegistry::record_peer_presence(PeerPresence change) {
  if (peer_presence_.size() >= kMaxPendingPeerPresence) {
    spdlog::error("presence: {} changes were never sent to the other nodes; dropping", peer_presence_.size());
    return;
  }
  peer_presence_.push_back(std::move(change));
}

// A consumer's producers, in changes of at most kMaxPeerPresenceNames names and about 256 KiB each.
void RealmRegistry::record_peer_presence(PeerPresence::Kind kind, const std::string& consumer, const std::string& socket,
                                         const Consumer& c) {
  constexpr size_t kMaxBytes = 256 * 1024;
  PeerPresence change{kind, consumer, socket, c.id, {}, {}, true};
  size_t bytes = 0;
  for (const auto& producer : c.subscribe_tos) {
    if (!change.names.empty() && (change.names.size() >= kMaxPeerPresenceNames || bytes + producer.size() > kMaxBytes)) {
      record_peer_presence(change);
      change.names.clear();
      bytes = 0;
    }
    change.names.push_back(producer);
    bytes += producer.size();
  }
  // A consumer subscribed to nothing is not announced: no producer would hear of it.
  if (!change.names.empty()) record_peer_presence(std::move(change));
}

// consumer -> the keys of its subscriptions naming `producer` (as given, case kept).
std::map<std::string, std::vector<std::string>> RealmRegistry::keys_naming(const std::string& producer) const {
  std::map<std::string, std::vector<std::string>> out;
  for (const auto& [key, subs] : subscriptions_) {
    for (const auto& [order, s] : subs.in_order) {
      if (s.producers.count(producer)) out[s.consumer].push_back(key);
    }
  }
  return out;
}

std::vector<Notice> RealmRegistry::peer_presence(const PeerPresence& change, std::vector<PeerPresence>& answers) const {
  using Kind = PeerPresence::Kind;
  std::vector<Notice> out;
  auto online_producer = [&](const std::string& name) -> const Producer* {
    auto p = producers_.find(name);
    return p != producers_.end() && p->second.online && p->second.endpoint ? &p->second : nullptr;
  };
  switch (change.kind) {
    case Kind::producer_online:
    case Kind::producer_offline: {
      const bool up = change.kind == Kind::producer_online;
      auto naming = keys_naming(change.name);
      // A TYO-MQ-ALL subscriber hears the producer leave as well (on one node it was told of the producer
      // when it subscribed); it is not told of its coming (as on one node).
      if (!up) {
        for (auto& [consumer, keys] : keys_naming(std::string(kAnyProducer))) {
          if (consumer != change.name) naming.try_emplace(consumer, std::move(keys));
        }
      }
      for (auto& [consumer, keys] : naming) {
        auto found = consumers_.find(consumer);
        if (found == consumers_.end()) continue;
        const Consumer& c = found->second;
        const bool online = c.online && c.endpoint;
        if (online) {
          out.push_back(link_notice(up ? Presence::Kind::connected : Presence::Kind::disconnected, c.endpoint, c.id,
                                    true, change.name, change.socket));
        }
        if (up) {
          answers.push_back({Kind::subscribed, consumer, online ? c.endpoint->socket_id() : std::string(), c.id,
                             change.name, std::move(keys), online});
        }
      }
      break;
    }
    case Kind::subscribed: {
      auto tell = [&](const Producer& p) {
        out.push_back(subscribed_notice(p, change.name, change.socket, change.id, change.names, change.online));
      };
      if (change.producer != kAnyProducer) {
        if (const Producer* p = online_producer(change.producer)) tell(*p);
      } else {
        for (const auto& [name, p] : producers_) {
          if (name != change.name && p.online && p.endpoint) tell(p);
        }
      }
      break;
    }
    case Kind::consumer_online:
    case Kind::consumer_offline: {
      const auto kind = change.kind == Kind::consumer_online ? Presence::Kind::connected : Presence::Kind::disconnected;
      for (const auto& producer : change.names) {
        if (const Producer* p = online_producer(producer))
          out.push_back(link_notice(kind, p->endpoint, p->id, false, change.name, change.socket,
                                    kind == Presence::Kind::connected ? change.id : std::string()));
      }
      break;
    }
  }
  return out;
}

}  // namespace siomq::broker
