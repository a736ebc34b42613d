// What the surfaces ask of the cluster (cluster.h implements it): the calls that reach the other nodes
// through Redis. An interface, so that the surfaces depend on no Redis code and a node alone has none.
// Every member may be called from any thread; callbacks run on the cluster's thread.
#pragma once

#include <functional>
#include <string>

#include "cluster/relay_message.h"
#include "wire/result.h"

namespace siomq::cluster {

class Link {
 public:
  virtual ~Link() = default;
  virtual const std::string& node_id() const = 0;
  // Sends a produced message to the other nodes (m.node_id is set by the link).
  virtual void relay(RelayedMessage m) = 0;
  // Claims a manager proof's nonce for the whole cluster: Ok the first time anywhere, 401 after, 503 when
  // Redis cannot say.
  virtual void claim_nonce(const std::string& nonce, std::function<void(const Status&)> done) = 0;
};

}  // namespace siomq::cluster
