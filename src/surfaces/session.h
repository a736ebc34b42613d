// One client's connection as the auth rules and the limits see it, whatever protocol it speaks (a
// Socket.IO socket on "/" or "/control", an HTTP client, a /remote peer): its grant, the realm it
// declared, its rate buckets, the names and subscriptions it holds, its address.
//
// A surface derives its own per-connection type from Session (tyo-mq's SocketEndpoint) and implements
// the four virtuals. Ownership: whoever serves the connection owns its Session through a shared_ptr;
// registries and pending work hold it weakly or share it, so a Session may outlive its connection
// (then notify and close do nothing).
//
// Threading: notify and close may be called from any thread; every other member, the data members
// included, is touched only on the session's worker.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>

#include "auth/authentication.h"
#include "auth/limits.h"

namespace siomq::net {
class Worker;
}

namespace siomq::surfaces {

class Session {
 public:
  virtual ~Session() = default;

  // The connection's id, for logs.
  virtual const std::string& id() const = 0;
  // The worker the connection lives on; it outlives every session (the server's worker pool).
  virtual net::Worker& worker() = 0;
  // From any thread: sends `event` with the JSON `payload` to the client, after everything sent before.
  virtual void notify(std::string_view event, std::string_view payload) = 0;
  // From any thread: ends the client's connection.
  virtual void close() = 0;
  // This session, shared: for work that finishes after the handler returns.
  virtual std::shared_ptr<Session> shared() = 0;

  // §2's tyoAuth and _pendingRealm. The session's realm is the grant's, else "default".
  std::optional<auth::Grant> grant;
  std::optional<std::string> pending_realm;
  bool authenticating = false;  // an external validator is being asked
  const std::string& realm() const;

  // Limits (§11.1): the rate buckets, the names and subscriptions this session made, the last RATE_LIMITED.
  auth::TokenBucket messages, bytes, credentials;
  std::set<std::pair<std::string, std::string>> registrations;  // (realm, name)
  std::set<std::pair<std::string, std::string>> subscriptions;  // (realm, key + consumer)
  int64_t rate_limited_at_ms = 0;
  std::string ip;  // the address limits count (X-Forwarded-For's last hop when trust_proxy)
};

}  // namespace siomq::surfaces
