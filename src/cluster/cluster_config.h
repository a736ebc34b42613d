// The `cluster` block of the settings (tyo-mq §10): several nodes share one Redis. Read once at start-up;
// a change needs a restart (as in the reference). Plain data; any thread.
#pragma once

#include <cstdint>
#include <string>

namespace siomq::cluster {

struct ClusterConfig {
  bool enabled = false;
  std::string redis_url;                   // default: storage_options.url
  std::string prefix = "tyo-mq:cluster";   // every key and channel of the cluster starts with it
  std::string node_id;                     // default: 16 random hex digits, new for every process
  // siomq's own: how long a node's lease lives without renewal (a dead node is noticed after it).
  int64_t node_lease_ms = 10'000;
  // Also publish every relayed message on <prefix>:messages for reference (Node.js tyo-mq) nodes:
  // "auto" does so while a node without a siomq lease has been seen on that channel, "always", "never".
  std::string reference_relay = "auto";
  // Not a setting: whether the node's durable store is sectioned in Redis (storage "redis"), so that
  // durable queues move between nodes and a dead node's are adopted (cluster/durable_homes.h).
  bool durable_homes = false;
};

}  // namespace siomq::cluster
