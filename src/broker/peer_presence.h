// Presence across the nodes of a cluster (docs/scale-out.md "Names and presence"): a change on one node
// that clients on the other nodes may need to hear of (tyo-mq §4.7). The node where it happens records
// it (RealmRegistry::take_peer_presence) and sends it to every other node; each of them turns it into
// its own clients' presence events (RealmRegistry::peer_presence), as if the peer were connected there:
//   producer_online    its subscribed consumers hear CONNECT-, and the producer hears SUBSCRIBE-TO- back
//                      (a `subscribed` change from each node holding such consumers)
//   producer_offline   its subscribed, online consumers hear DISCONNECT-
//   subscribed         a consumer subscribed to `producer` (TYO-MQ-ALL: to every producer but itself):
//                      that producer, where it is online, hears SUBSCRIBE-TO-
//   consumer_online    the producers it subscribes to hear CONNECT-
//   consumer_offline   ... DISCONNECT-
// Values only; any thread.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace siomq::broker {

struct PeerPresence {
  enum class Kind : uint8_t { producer_online, producer_offline, subscribed, consumer_online, consumer_offline };
  Kind kind = Kind::producer_online;
  std::string name;                // the producer's name (producer_*), else the consumer's
  std::string socket;              // its socket id
  std::string id;                  // the consumer's id (subscribed, consumer_*)
  std::string producer;            // subscribed: the producer its subscription names
  std::vector<std::string> names;  // subscribed: the subscription keys; consumer_*: the producers it subscribes to
  bool online = true;              // subscribed: whether the consumer is online
};

// A consumer subscribed to many producers is told of in several changes of at most this many names each
// (a change must fit in one cluster note).
inline constexpr size_t kMaxPeerPresenceNames = 512;
// Changes recorded and not taken yet past this are dropped (a caller that forgot to take them must not
// grow the registry without bound).
inline constexpr size_t kMaxPendingPeerPresence = 10'000;

}  // namespace siomq::broker
