// This node's membership of a cluster: several siomq (and reference tyo-mq) nodes sharing one Redis,
// with the keyspace and message shapes of tyo-mq §10 (docs/scale-out.md):
//   <c>:settings            {settings, node_id, updated_at}: the whole settings document, last writer wins
//   <c>:settings:rev        INCR counter;  <c>:settings:changed  channel {revision, node_id}
//   <c>:messages            channel {node_id, payload}: produced messages relayed to the other nodes
//   <c>:nonce:<nonce>       a manager proof's nonce, claimed once for the whole cluster (SET NX PX)
// Each node ignores what carries its own node_id. siomq's own, for the interest-based relay
// (cluster/interest.h): <c>:nodes (leases), <c>:node:<id>:interest, <c>:node:<id> (its relay channel),
// <c>:interest (notes); <c>:consumers:<realm> and <c>:node:<id>:names (consumer names, cluster/name_claims.h);
// <c>:presence (presence notes, cluster/presence_note.h). A message goes to <c>:messages only while a reference node shares the cluster;
// otherwise only to the nodes whose subscriptions want it (cluster/interest_sync.h).
//
// Guarantees: nothing here blocks a caller. While Redis is unreachable the node keeps serving its own
// clients: relayed messages are dropped (counted; live traffic is best effort across nodes), a settings
// change is published once Redis is back (the newest document), a nonce claim fails (503) rather than
// let a proof be replayed on another node. The connection is retried with backoff, logged once per
// outage; after it comes back the node subscribes again and adopts the cluster's settings (or publishes
// its own when Redis holds none, as on first start).
//
// Threading: one thread of its own runs both Redis connections (commands, subscriptions) and calls the
// handlers. Every public member may be called from any thread. Construct, then start(); stop() (or the
// destructor) joins the thread; the handlers are not called after stop() returns.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "broker/interest_ledger.h"
#include "cluster/cluster_config.h"
#include "cluster/link.h"
#include "cluster/bus_relay.h"
#include "cluster/relay_message.h"
#include "wire/result.h"

namespace siomq::cluster {

class Cluster final : public Link {
 public:
  struct Handlers {
    // A message produced on another node (already decoded and checked); on the cluster thread.
    std::function<void(const RelayedMessage&)> message;
    // A bus message published on another node (cluster/bus_relay.h, decoded and checked); on the cluster
    // thread.
    std::function<void(const BusRelayed&)> bus_message;
    // Another node's settings document (the `settings` member of <c>:settings, as JSON text) to adopt
    // whole; on the cluster thread.
    std::function<void(const std::string& document)> adopt_settings;
    // This node's document, published when the cluster holds none yet; on the cluster thread.
    std::function<std::string()> local_settings;
    // A note on one of `note_channels` (<c>:<channel>, e.g. "authreq:decided"), at most kMaxNoteBytes,
    // on the cluster thread. Handed over only once every command sent before it arrived has been
    // answered: a settings change announced before the note has been adopted by then.
    std::vector<std::string> note_channels;
    std::function<void(const std::string& channel, const std::string& text)> note;
    // Each time the node has (re)joined (subscribed, settings synced), on the cluster thread: what the
    // node copies from the shared documents, in case it missed their notes.
    std::function<void()> joined;
    // A consumer name this node held was taken by another node while Redis was away (cluster/name_claims.h):
    // its holder here is to be dropped; on the cluster thread.
    std::function<void(const std::string& realm, const std::string& name)> name_lost;
    // A store section claimed for this node to adopt (cluster/durable_homes.h), on the cluster thread.
    std::function<void(const std::string& section)> adopt_section;
  };
  using Stats = LinkStats;

  // A node_id is made (16 random hex digits) when the config has none. The relayed text cap is the
  // largest message a peer may hand this node (what a client could send it directly, plus the envelope).
  // `ledger`: this node's interest (the broker reports to it); it must outlive the cluster; null: the
  // node wants nothing relayed (other siomq nodes send it nothing but broadcasts).
  Cluster(ClusterConfig config, Handlers handlers, size_t max_relayed_bytes, broker::InterestLedger* ledger);
  ~Cluster() override;
  Cluster(const Cluster&) = delete;
  Cluster& operator=(const Cluster&) = delete;

  // Starts the thread and the first connection; then waits up to `wait` for the first settings sync, so
  // that a node joining a cluster serves with the cluster's settings. Returns whether it synced; a
  // Redis that cannot be reached ends the wait at once (the node serves its own settings meanwhile).
  bool start(std::chrono::milliseconds wait);
  void stop();

  const std::string& node_id() const override { return config_.node_id; }
  const ClusterConfig& config() const { return config_; }

  bool relay(RelayedMessage m) override;
  void answer_relayed(const std::string& origin, uint64_t confirm, size_t stored, const Status& status) override;
  std::shared_ptr<const broker::RemoteGroups> remote_groups() const override;
  bool relay_bus(std::vector<std::pair<std::string, std::string>> texts) override;
  std::shared_ptr<const broker::RemoteBus> remote_bus() const override;
  bool relay_backed_up() const override;
  std::optional<std::string> inbox_sender(std::string_view token) const override;
  void claim_nonce(const std::string& nonce, std::function<void(const Status&)> done) override;
  void claim_name(const std::string& realm, const std::string& name, std::function<void(const Status&)> done) override;
  void release_name(const std::string& realm, const std::string& name) override;
  bool durable_homes() const override { return config_.durable_homes; }
  void claim_home(const std::string& realm, const std::string& consumer) override;
  void release_home(const std::string& realm, const std::string& consumer) override;
  void settle_home(const std::string& realm, const std::string& consumer,
                   std::function<void(std::optional<std::string>)> done) override;
  void offer_section(const std::string& section, const std::string& to, std::function<void(const Status&)> done) override;
  void claim_section(const std::string& section) override;
  void section_adopted(const std::string& section) override;
  void read_document(const std::string& name, Read done) override;
  void change_document(const std::string& name, Change change, std::function<void(const Status&)> done) override;
  void publish(const std::string& channel, std::string text) override;
  // Publishes this node's whole settings document after a change made here (not for adopted ones).
  void publish_settings(std::string document);

  Stats stats() const override;

 private:
  class Node;  // the cluster thread's state (cluster.cc)
  ClusterConfig config_;
  std::unique_ptr<Node> node_;
};

}  // namespace siomq::cluster
