// What the surfaces ask of the cluster (cluster.h implements it): the calls that reach the other nodes
// through Redis. An interface, so that the surfaces depend on no Redis code and a node alone has none.
// Every member may be called from any thread; callbacks run on the cluster's thread.
#pragma once

#include <functional>
#include <optional>
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
  // A JSON document shared by read-modify-write under <prefix>:<name> (§10's authreqs): its text ("{}"
  // when absent or unreadable), or 503 when Redis cannot be read.
  virtual void read_shared(const std::string& name, std::function<void(Result<std::string>)> done) = 0;
  // Reads it, applies `change` (nullopt: nothing to write) and writes the result back. Across nodes the
  // last writer wins, as in the reference.
  virtual void change_shared(const std::string& name, std::function<std::optional<std::string>(const std::string&)> change) = 0;
  // PUBLISH on <prefix>:<channel>.
  virtual void publish(const std::string& channel, std::string text) = 0;
};

}  // namespace siomq::cluster
