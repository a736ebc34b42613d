#include "surfaces/bus/cluster_bus.h"

#include <algorithm>
#include <utility>

#include "net/engine_server.h"
#include "surfaces/bus/core.h"
#include "wire/bus_subject.h"

namespace siomq::surfaces::bus {
namespace {

using QueueNames = std::vector<std::pair<std::string, std::string>>;

QueueNames queue_names(const std::vector<broker::QueuePick>& picks) {
  QueueNames names;
  names.reserve(picks.size());
  for (const auto& p : picks) names.emplace_back(p.pattern, p.queue);
  return names;
}

}  // namespace

std::shared_ptr<const broker::RemoteBus> remote_bus(BusContext& ctx) {
  return ctx.tyo->cluster ? ctx.tyo->cluster->remote_bus() : nullptr;
}

broker::BusScope publish_scope(BusContext& ctx, const std::string& realm, const broker::RemoteBus* remote,
                               std::vector<broker::QueuePick>& picks) {
  broker::BusScope scope;
  if (!remote) return scope;
  scope.remote = remote;
  scope.realm = realm;
  scope.picks = &picks;
  scope.keep_turns = ctx.tyo->cluster->relay_backed_up();
  return scope;
}

std::string new_inbox(BusContext& ctx) {
  std::string inbox(siomq::bus::kInboxPrefix);
  if (ctx.tyo->cluster) inbox.append(broker::inbox_token(ctx.tyo->cluster->node_id())).push_back('.');
  return inbox + net::random_id();
}

Relayed relay_published(BusContext& ctx, const std::string& realm, const broker::BusMessagePtr& message,
                        const broker::RemoteBus* remote, std::vector<broker::QueuePick> picks) {
  Relayed out;
  cluster::Link* link = ctx.tyo->cluster.get();
  if (!link || !remote) return out;
  // Each node once, with the groups whose turn it got.
  std::vector<std::pair<std::string, QueueNames>> nodes;
  auto node_entry = [&](const std::string& node) -> QueueNames& {
    auto it = std::find_if(nodes.begin(), nodes.end(), [&](const auto& n) { return n.first == node; });
    if (it != nodes.end()) return it->second;
    return nodes.emplace_back(node, QueueNames{}).second;
  };
  thread_local std::vector<std::string> wanting;
  wanting.clear();
  remote->plain_targets(realm, message->subject, wanting);
  for (const auto& node : wanting) node_entry(node);
  // A reply to a request of another node goes back there (its inbox names it) — one that relayed a
  // request here even if this node has not read it yet (it has just joined).
  if (const std::string* node = remote->inbox_node(message->subject)) {
    node_entry(*node);
  } else if (std::string_view token = broker::inbox_token_of(message->subject); !token.empty()) {
    if (auto sender = link->inbox_sender(token)) node_entry(*sender);
  }
  for (auto& p : picks) {
    QueueNames& names = node_entry(p.node);
    if (names.size() < cluster::kMaxRelayedQueues) names.emplace_back(p.pattern, p.queue);
    else out.unsent.push_back(std::move(p));
  }
  if (nodes.empty()) return out;
  out.any = true;
  std::vector<std::pair<std::string, std::string>> texts;
  texts.reserve(nodes.size());
  for (const auto& [node, queues] : nodes)
    texts.emplace_back(node, cluster::encode_bus_relay(link->node_id(), realm, *message, queues));
  if (link->relay_bus(std::move(texts))) return out;
  out.sent = false;
  for (auto& p : picks) {
    if (!p.node.empty()) out.unsent.push_back(std::move(p));  // (those moved out above are empty)
  }
  return out;
}

size_t give_back_turns(BusContext& ctx, const std::string& realm, const broker::BusMessagePtr& message,
                       const std::vector<broker::QueuePick>& picks) {
  if (picks.empty()) return 0;
  QueueNames names = queue_names(picks);
  std::vector<broker::Sublist::Copy> targets;
  broker::Sublist::BusScope scope;
  scope.named = &names;
  scope.groups_only = true;
  ctx.tyo->broker.if_realm(realm, [&](broker::RealmRegistry& r) { r.bus().route(message->subject, targets, scope); });
  broker::deliver(targets, message);
  return targets.size();
}

void deliver_bus_relayed(BusContext& ctx, const cluster::BusRelayed& relayed) {
  auto message = std::make_shared<broker::BusMessage>(relayed.message);
  std::vector<broker::Sublist::Copy> targets;
  bool bound = false;
  broker::Sublist::BusScope scope;
  scope.named = &relayed.queues;
  ctx.tyo->broker.if_realm(relayed.realm, [&](broker::RealmRegistry& r) {
    bound = r.stream_bound(message->subject);
    r.bus().route(message->subject, targets, scope);
  });
  broker::deliver(targets, message);
  if (bound) capture_in_stream(ctx, relayed.realm, message);
}

}  // namespace siomq::surfaces::bus
