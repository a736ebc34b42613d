// Interest-based relay, the Redis part (docs/scale-out.md; the keys and texts: cluster/interest.h).
//
// This node: keeps its interest (broker::InterestLedger) in <c>:node:N:interest — rewritten whole when
// the node (re)joins, changed by a script that also notes the change on <c>:interest — and holds a lease
// in <c>:nodes, renewed every lease/4 by a heartbeat script that also drops the nodes whose lease ended
// (and their hashes) and answers every live node's version.
// The others: their interest is read whole (HGETALL) when they are first seen, when a note does not
// follow the version held, and when the heartbeat shows another version; notes in between are applied.
//
// Where a message goes: to <c>:node:M for each other node M whose interest matches (a broadcast: to each
// live node), or once to tyo-mq §10's <c>:messages, which every node reads, while a reference node
// shares the cluster ("reference_relay": "always"; "auto" while more clients listen on <c>:messages than
// on the live siomq nodes' own channels, or a message came there from a node without a lease; "never").
//
// Consistency: a subscription made on node B reaches A's view a round trip through Redis later
// (milliseconds); messages A relays meanwhile do not go to B. Live traffic across nodes is best effort,
// as in §10. A node that stops renewing its lease is dropped by the others after it (node_lease_ms).
//
// Threading: the cluster thread only (wake() is posted there by the ledger's callback); stats() any thread.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "broker/interest_ledger.h"
#include "cluster/cluster_config.h"
#include "cluster/interest.h"
#include "redis/async_client.h"

namespace siomq::cluster {

class InterestSync {
 public:
  // Sends one command on the node's command connection (errors come back when Redis is gone).
  using Command = std::function<void(std::vector<std::string> args, redis::AsyncClient::ReplyHandler)>;
  struct Stats {
    size_t peers = 0, terms = 0;
    bool reference_mode = false;
    uint64_t interest_reads = 0, notes_refused = 0;
  };

  InterestSync(boost::asio::io_context& io, const ClusterConfig& config, broker::InterestLedger* ledger, Command command);

  // The channels the node subscribes to for it: its own relay channel and the interest notes.
  const std::string& relay_channel() const { return relay_channel_; }
  const std::string& note_channel() const { return note_channel_; }

  // Redis is there (subscribed): rewrite this node's hash whole, start the heartbeat.
  void joined();
  // Redis went away: nothing is sent until joined() again; the view is kept meanwhile (messages are dropped
  // while Redis is away anyway) and checked by the first heartbeat after.
  void lost();
  // The ledger changed (posted to the cluster thread).
  void wake();
  void on_note(std::string_view body);
  // A message came on <c>:messages from `node`: one holding no siomq lease is a reference node.
  void heard_on_messages(const std::string& node);

  // The channels to PUBLISH one relayed message on (appended to `out`); `producer` as the receiving node
  // routes it (ANONYMOUS when the message names none).
  void route(std::string_view realm, std::string_view producer, std::string_view event, bool broadcast,
             std::vector<std::string>& out) const;

  // After each heartbeat's answer, on the cluster thread: whether this node's lease was still held (false:
  // it ended and another node dropped what the node held — its interest, written again here, and its
  // consumer names, which the caller claims again).
  void on_heartbeat(std::function<void(bool lease_kept)> f) { heartbeat_hook_ = std::move(f); }

  // Any thread.
  Stats stats() const;
  // The other nodes' online consumer-group members (broker/remote_groups.h) while this node can relay to
  // them (Redis there, no reference node: a reference relay carries no group turns); else null.
  std::shared_ptr<const broker::RemoteGroups> remote_groups() const;
  // The other nodes' bus interest (broker/remote_bus.h) while Redis is there; else null.
  std::shared_ptr<const broker::RemoteBus> remote_bus() const;

 private:
  void flush();
  void rewrite();
  void heartbeat();
  void arm_heartbeat();
  void on_heartbeat(const redis::Value& v);
  void read(const std::string& node, bool force);
  bool reference_mode() const;
  void saw_reference();
  void count_reference_nodes();
  void count();  // the figures stats() reads, and the group directory
  void share_groups();

  const ClusterConfig& config_;
  broker::InterestLedger* ledger_;
  std::function<void(bool)> heartbeat_hook_;
  Command command_;
  boost::asio::steady_timer heartbeat_timer_;
  std::string relay_channel_, note_channel_, messages_channel_, hash_key_, nodes_key_, node_channel_prefix_;
  std::string node_channels_pattern_;  // <c>:node:* as a glob, the prefix escaped
  std::chrono::milliseconds heartbeat_every_;
  uint64_t epoch_ = 0;  // bumped by joined() and lost(): answers of an older epoch are ignored
  bool up_ = false;
  bool rewrite_due_ = false;
  // This node's interest as Redis holds it (after the last script sent).
  std::unordered_set<InterestTerm, broker::InterestTermHash> published_;
  uint64_t version_ = 0;  // the last this node's scripts made
  bool flushing_ = false, flush_again_ = false;
  // The others'.
  InterestView view_;
  std::unordered_set<std::string> live_;  // the nodes holding a lease at the last heartbeat, this one too
  std::unordered_set<std::string> reading_;
  std::unordered_map<std::string, bool> read_again_;  // node -> whether that read must replace whatever is held
  // Until when (steady clock, ms) this node relays on <c>:messages in "auto" mode.
  std::atomic<int64_t> reference_until_ms_{0};
  std::atomic<size_t> peers_{0}, terms_{0};
  mutable std::mutex groups_mu_;
  std::shared_ptr<const broker::RemoteGroups> groups_;  // under groups_mu_
  std::atomic<bool> groups_usable_{false};             // up, and groups_ holds some
  std::shared_ptr<const broker::RemoteBus> bus_;       // under groups_mu_
  std::atomic<bool> bus_usable_{false};                // up, and bus_ holds some
  // The directories (groups, bus) are built at most once per kGroupsEvery (a burst of changes costs one
  // build).
  boost::asio::steady_timer groups_timer_;
  bool groups_timer_armed_ = false;
  std::chrono::steady_clock::time_point groups_built_{};
  void build_groups();
  std::atomic<uint64_t> interest_reads_{0}, notes_refused_{0};
};

}  // namespace siomq::cluster
