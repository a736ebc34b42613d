// Consumer names unique across a cluster's nodes (docs/scale-out.md "Names and presence"), the Redis part.
//
// Keys: <c>:consumers:<realm> (a hash: consumer name -> the node holding it) and, per node,
// <c>:node:<id>:names (a set of index members, name_index_member()), so that the names of a node whose
// lease ended can be dropped with its interest (the heartbeat script, interest_sync.cc, runs
// sweep_names_lua() for each such node).
//
// A claim takes the name unless a node whose lease is alive holds it; a name held by a node whose lease
// ended is taken over. This node counts its claims per name (several sessions may claim one name; the
// local registry decides among them) and releases the name in Redis when the last claim is released. While
// Redis is away a claim is granted (the node keeps serving) and made once Redis is back: a name another
// node took meanwhile is lost here — `lost` is called, and the local holder is told ERROR -3 and dropped.
//
// Threading: the cluster thread only.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "cluster/cluster_config.h"
#include "redis/async_client.h"
#include "wire/result.h"

namespace siomq::cluster {

// The index member of (realm, name): "<length of realm>:<realm><name>" (wire/length_prefixed.h).
std::string name_index_member(std::string_view realm, std::string_view name);
std::optional<std::pair<std::string, std::string>> parse_name_index_member(std::string_view member);

// Lua defining `sweep_names(prefix, id)`: drops the names node `id` holds (those still its own) and its index.
const std::string& sweep_names_lua();

class NameClaims {
 public:
  using Command = std::function<void(std::vector<std::string> args, redis::AsyncClient::ReplyHandler)>;
  using Lost = std::function<void(const std::string& realm, const std::string& name)>;

  NameClaims(const ClusterConfig& config, Command command, Lost lost);

  // `done`: Ok when the name is this node's now (or Redis cannot say: claimed once it is back); 409 when
  // another live node holds it. Every claim, granted or not, is released once (the count is per claim).
  void claim(const std::string& realm, const std::string& name, bool up, std::function<void(const Status&)> done);
  void release(const std::string& realm, const std::string& name, bool up);
  // Redis is there again: every name claimed here is claimed again, and the index rewritten.
  void joined();
  // After each heartbeat: a lease that ended (another node swept this node's names) or a claim that Redis
  // did not answer makes every name claimed again.
  void heartbeat(bool lease_kept) {
    if (!lease_kept || reclaim_due_) joined();
  }
  size_t held() const { return held_.size(); }

 private:
  const ClusterConfig& config_;
  Command command_;
  Lost lost_;
  std::string nodes_key_, index_key_;
  std::unordered_map<std::string, size_t> held_;  // index member -> claims made and not released
  bool reclaim_due_ = false;
};

}  // namespace siomq::cluster
