// What the surfaces ask of the cluster (cluster.h implements it): the calls that reach the other nodes
// through Redis. An interface, so that the surfaces depend on no Redis code and a node alone has none.
// Every member may be called from any thread; callbacks run on the cluster's thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "broker/remote_bus.h"
#include "cluster/relay_message.h"
#include "wire/result.h"

namespace siomq::cluster {

// The largest note (a message on one of the cluster's note channels) a node reads.
inline constexpr size_t kMaxNoteBytes = size_t{1} << 20;

// What the link has done since start (exported in /api/metrics as siomq_cluster_*).
struct LinkStats {
  bool connected = false;
  uint64_t relayed_out = 0;     // produced here and sent to at least one other node
  uint64_t relayed_in = 0;      // relayed by another node and delivered here
  uint64_t relay_dropped = 0;   // not sent: Redis away or too slow
  uint64_t relay_refused = 0;   // read from Redis and refused (not a relayed message)
  uint64_t relay_unwanted = 0;  // produced here and wanted by no other node: not sent
  uint64_t outages = 0;
  size_t peers = 0;             // other siomq nodes whose interest this node holds
  size_t interest_terms = 0;    // this node's, as published
  bool reference_mode = false;  // relaying on <c>:messages for reference nodes
};

class Link {
 public:
  virtual ~Link() = default;
  virtual const std::string& node_id() const = 0;
  virtual LinkStats stats() const = 0;
  // Sends a produced message to the other nodes (m.node_id is set by the link); with m.confirmed, that is
  // called once the nodes it went to have answered (at once, with 0, when it went nowhere). A node named in
  // m.group_picks gets it with those groups named, whether or not it wants it otherwise. False when it was
  // dropped at once (Redis away, the outbox full): the caller's own members take the picked groups' turns.
  virtual bool relay(RelayedMessage m) = 0;
  // Answers a relayed message that carried "confirm" (m.confirm) to its origin: how many copies this node
  // stored, or why it could not (docs/scale-out.md "Durable queues across nodes").
  virtual void answer_relayed(const std::string& origin, uint64_t confirm, size_t stored, const Status& status) = 0;
  // The other nodes' online consumer-group members, for routing a PRODUCE here (broker/remote_groups.h);
  // null when no group spans nodes now (or Redis is away, or a reference node shares the cluster).
  virtual std::shared_ptr<const broker::RemoteGroups> remote_groups() const = 0;
  // The bus across nodes (docs/scale-out.md "The bus across nodes"). Sends each (node, text) pair —
  // cluster/bus_relay.h's texts, one per node — to that node. False when they were dropped at once
  // (Redis away, the outbox full).
  virtual bool relay_bus(std::vector<std::pair<std::string, std::string>> texts) = 0;
  // The other nodes' bus subscriptions and queue groups (broker/remote_bus.h); null while there are none
  // or Redis is away.
  virtual std::shared_ptr<const broker::RemoteBus> remote_bus() const = 0;
  // The node whose inbox token is `token` among the nodes that relayed a request here (broker::inbox_token):
  // a reply to a node this one has not read yet (it just joined) still finds it. nullopt: none.
  virtual std::optional<std::string> inbox_sender(std::string_view token) const = 0;
  // Whether the relay is backed up (its outbox or the commands waiting for Redis past half their bounds):
  // a queue group's turn given to another node now would likely be dropped on the way.
  virtual bool relay_backed_up() const = 0;
  // Claims a manager proof's nonce for the whole cluster: Ok the first time anywhere, 401 after, 503 when
  // Redis cannot say.
  virtual void claim_nonce(const std::string& nonce, std::function<void(const Status&)> done) = 0;

  // Claims the consumer name `name` of `realm` for this node, cluster-wide (cluster/name_claims.h): Ok when
  // no other live node holds it (or Redis cannot say now: it is claimed once Redis is back), 409 when one
  // does. Each Ok is released once, when the claim's session ends.
  virtual void claim_name(const std::string& realm, const std::string& name, std::function<void(const Status&)> done) = 0;
  virtual void release_name(const std::string& realm, const std::string& name) = 0;

  // Durable queues across nodes (cluster/durable_homes.h; no-ops unless the node's store is sectioned).
  // Whether it is: then a relayed message is stored here for the durable consumers whose home this is.
  virtual bool durable_homes() const = 0;
  // The consumer subscribed durably here: its home is this node, its queues are moved here from a live node.
  virtual void claim_home(const std::string& realm, const std::string& consumer) = 0;
  // The consumer has no subscription left here: its home is forgotten if it is this node. With `consumer`
  // empty, the realm's homes (the realm was removed).
  virtual void release_home(const std::string& realm, const std::string& consumer) = 0;
  // After an adoption: `done(node)` when another live node is the consumer's home, nullopt when this one is.
  virtual void settle_home(const std::string& realm, const std::string& consumer,
                           std::function<void(std::optional<std::string>)> done) = 0;
  // The store section `section`, written for node `to`, is offered to it (anyone adopts it once `to` is gone).
  virtual void offer_section(const std::string& section, const std::string& to, std::function<void(const Status&)> done) = 0;
  // Claims `section` for adoption here; the adopt_section handler is called when it is this node's.
  virtual void claim_section(const std::string& section) = 0;
  // The section's rows are this node's now: it is dropped from the sections.
  virtual void section_adopted(const std::string& section) = 0;

  // The documents the nodes share (tyo-mq §10: "authreqs", "e2eekeys"), JSON texts at <c>:<name>.
  // Reads one: nullopt when it does not exist; 503 when Redis cannot say.
  using Read = std::function<void(Result<std::optional<std::string>>)>;
  virtual void read_document(const std::string& name, Read done) = 0;
  // Changes one against every node at once (a Redis transaction, retried when another node changed it
  // meanwhile): `change` gets the current text and returns the new one, or an error that ends the change
  // with nothing written. Changes from this node run one at a time, in call order. 503 when Redis
  // cannot take it (nothing was written, or a retry could not tell).
  using Change = std::function<Result<std::string>(const std::optional<std::string>& current)>;
  virtual void change_document(const std::string& name, Change change, std::function<void(const Status&)> done) = 0;
  // Publishes `text` on <c>:<channel>, after whatever this node sent before it (a change of the
  // settings included). Dropped while Redis is away.
  virtual void publish(const std::string& channel, std::string text) = 0;
};

}  // namespace siomq::cluster
