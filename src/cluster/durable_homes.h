// Durable delivery from any node (docs/scale-out.md "Durable queues across nodes"), the Redis part: where
// each durable consumer's queues live, and the store sections that change hands.
//
// Keys:
//   <c>:homes:<realm>   hash: consumer name -> the node holding its durable queues (its home)
//   <c>:sections        hash: store section -> the node it is for ('' : its own node's, or anyone's)
//   <c>:adopt:<section> the node adopting the section (SET NX PX: one adopter at a time)
// A store section is a key prefix of the redis store, <storage prefix>:<section>: each node's rows live in
// the section named after it; a move writes a consumer's queues to a section "move:<hex>" of their own.
// A section whose node's lease is over (a dead node, a finished move) is adopted by one live node: it
// loads the section, stores its rows as its own, then erases them there and drops the section.
//
// A home is claimed by the node where the consumer subscribes durably; when another live node held it,
// that node is told (a note on <c>:durable) to move the queues over. A node that adopted queues settles
// their homes: a consumer whose home is another live node has them moved on to it.
//
// Threading: the public members but sweep() may be called from any thread: they run on the cluster
// thread, and do nothing while Redis is away (a claim is made again by the consumer's next SUBSCRIBE or the
// next join's settling; a section is swept again at the next heartbeat). Callbacks run on the cluster
// thread. sweep(): the cluster thread only.
#pragma once

#include <boost/asio/io_context.hpp>

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cluster/cluster_config.h"
#include "cluster/durable_note.h"
#include "redis/async_client.h"
#include "wire/result.h"

namespace siomq::cluster {

class DurableHomes {
 public:
  using Command = std::function<void(std::vector<std::string> args, redis::AsyncClient::ReplyHandler)>;
  // A section claimed for this node, to adopt.
  using Adopt = std::function<void(const std::string& section)>;

  // `up`: whether Redis is there now (read on the cluster thread).
  DurableHomes(boost::asio::io_context& io, const ClusterConfig& config, Command command, std::function<bool()> up,
               Adopt adopt);

  // The consumer subscribed durably here: its home is this node from now on. When another live node held it,
  // that node is told to move its queues here.
  void claim(const std::string& realm, const std::string& consumer);
  // The consumer's home forgotten if it is this node (it has nothing here any more); with `consumer`
  // empty, the realm's homes all (a removed realm).
  void release(const std::string& realm, const std::string& consumer);
  // After an adoption: `done(node)` when another live node is the consumer's home (its queues go on there),
  // nullopt when it is this node's now (or Redis cannot say: they stay here).
  void settle(const std::string& realm, const std::string& consumer,
              std::function<void(std::optional<std::string>)> done);
  // A section written for node `to`: registered (anyone adopts it once `to` is gone), and `to` told; 503
  // while Redis is away.
  void offer(const std::string& section, const std::string& to, std::function<void(const Status&)> done);
  // Claims `section` for adoption here (an adopt note for this node): `adopt` is called when it is ours.
  void claim_section(const std::string& section);
  // The section's rows are this node's now: it is dropped.
  void adopted(const std::string& section);
  // At each heartbeat: this node's own section registered again, and the sections of nodes whose lease
  // ended (and moves left for them) claimed, a few at a time.
  void sweep();

 private:
  // Runs `f` on the cluster thread while Redis is there; `otherwise` when it is not.
  void when_up(std::function<void()> f, std::function<void()> otherwise = {});

  boost::asio::io_context& io_;
  const ClusterConfig& config_;
  Command command_;
  std::function<bool()> up_;
  Adopt adopt_;
  std::string sections_key_, nodes_key_;
};

}  // namespace siomq::cluster
