// The bus across the nodes of a cluster (docs/scale-out.md "The bus across nodes"): what a publish here
// sends to the other nodes, and what a message relayed from another node does here.
//
// A publish routes to this node's subscribers with the other nodes' queue groups in view (a group's turn
// may fall to another node), then goes to each node holding a matching subscription or stream binding,
// or given a group's turn, or — for a reply to a request's inbox — to the requester's node. A
// relayed message reaches this node's plain subscribers, one member of each group the publisher named,
// and a stream binding its subject; it is never relayed again nor bridged to tyo-mq (its own node did that).
//
// Threading: relay_published on the publisher's worker (after routing here, outside the realm's lock);
// deliver_bus_relayed on the cluster thread.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "broker/bus_message.h"
#include "broker/remote_bus.h"
#include "cluster/bus_relay.h"
#include "surfaces/bus/bus_context.h"

namespace siomq::surfaces::bus {

// The other nodes' bus directory; null when this node is alone.
std::shared_ptr<const broker::RemoteBus> remote_bus(BusContext& ctx);

// How a publish here routes: with the other nodes' queue groups in view (their turns appended to `picks`)
// (while the relay is backed up, a group with members here keeps its turns here).
broker::BusScope publish_scope(BusContext& ctx, const std::string& realm, const broker::RemoteBus* remote,
                               std::vector<broker::QueuePick>& picks);

// A request's inbox: `_INBOX.<random>`, and in a cluster `_INBOX.<this node's inbox token>.<random>`, so
// that a reply published on any node comes back here (broker::RemoteBus::inbox_node).
std::string new_inbox(BusContext& ctx);

// Sends `message` to the other nodes that want it (`remote`: the directory it was routed with; `picks`:
// the group turns given to other nodes) and to the node whose inbox its subject is. `sent`: false when
// the relay could not take it; `any`: some node was to get it; `unsent`: the picks that did not leave,
// whose turns the caller gives back to this node's members (give_back_turns).
struct Relayed {
  bool sent = true;
  bool any = false;
  std::vector<broker::QueuePick> unsent;
};
Relayed relay_published(BusContext& ctx, const std::string& realm, const broker::BusMessagePtr& message,
                        const broker::RemoteBus* remote, std::vector<broker::QueuePick> picks);
// The picked groups' turns taken by this node's members after all; returns the copies made.
size_t give_back_turns(BusContext& ctx, const std::string& realm, const broker::BusMessagePtr& message,
                       const std::vector<broker::QueuePick>& picks);

// A message published on another node, delivered here.
void deliver_bus_relayed(BusContext& ctx, const cluster::BusRelayed& relayed);

}  // namespace siomq::surfaces::bus
