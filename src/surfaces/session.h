// One client's connection as the auth rules and the limits see it, whatever protocol it speaks (a
// Socket.IO socket on "/" or "/control", an HTTP client, a /remote peer): its grant, the realm it
// declared, its rate buckets, the names and subscriptions it holds, its address, the realms it used
// and its unfinished PRODUCE_CHUNK transfers; and the engine endpoint its names are bound to.
//
// A surface derives its own per-connection type from Session (tyo-mq's SocketEndpoint) and implements
// the virtuals. Ownership: whoever serves the connection owns its Session through a shared_ptr;
// registries and pending work hold it weakly or share it, so a Session may outlive its connection
// (then notify and close do nothing).
//
// Threading: notify and close may be called from any thread; every other member, the data members
// included, is touched only on the session's worker.
//
// The chunk assembler is tyo-mq's (§3.6) but lives here, so that every surface that publishes can
// take a transfer in pieces through the same handler.
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
#include "broker/endpoint.h"
#include "surfaces/tyo_mq/produce_chunks.h"

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
  // The engine's endpoint of this client: what its names and subscriptions are bound to and what
  // deliveries are routed to. Null for a session the engine never routes to.
  virtual broker::EndpointPtr endpoint() = 0;
  // On the session's worker, from a handler: ends the connection at once, after what was sent to it
  // before. The handler sends nothing after it (the connection, and the reply with it, may be gone).
  virtual void close_now() = 0;

  // §2's tyoAuth (its _pendingRealm is held()'s). The session's realm is the grant's, else "default".
  std::optional<auth::Grant> grant;
  const std::string& realm() const;

  // Limits (§11.1): the rate buckets, the last RATE_LIMITED.
  auth::TokenBucket messages, bytes, credentials;
  int64_t rate_limited_at_ms = 0;
  std::string ip;  // the address limits count (X-Forwarded-For's last hop when trust_proxy)

  // What a session takes on as it is used. Allocated by its first use (held()), so that an idle
  // connection carries a pointer instead of ~290 bytes of empty sets (docs/performance.md, "An idle
  // connection"); holdings() reads without allocating (an empty Holdings when nothing was taken on).
  struct Holdings {
    // §2's _pendingRealm: the realm a failed or partial AUTH declared.
    std::optional<std::string> pending_realm;
    // The names and subscriptions this session made (the per-socket caps count them).
    std::set<std::pair<std::string, std::string>> registrations;  // (realm, name)
    std::set<std::pair<std::string, std::string>> subscriptions;  // (realm, key + consumer)
    // Every realm this session registered or subscribed in: its end takes it offline in each.
    std::set<std::string> realms;
    // In a cluster: the consumer names (realm, name) this session claimed cluster-wide, released when it
    // ends.
    std::set<std::pair<std::string, std::string>> claimed_names;
    // PRODUCE_CHUNK transfers in progress (§3.6); dropped with the session, or by a timer once idle.
    ChunkAssembler chunks;
  };
  Holdings& held() {
    if (!holdings_) holdings_ = std::make_unique<Holdings>();
    return *holdings_;
  }
  const Holdings& holdings() const {
    static const Holdings kNothing;
    return holdings_ ? *holdings_ : kNothing;
  }
  bool holds_anything() const { return holdings_ != nullptr; }

  // In a cluster: the name claims this session waits on (bounded); whether it has ended (a claim
  // answered later is released).
  uint16_t claims_waiting = 0;
  bool ended = false;
  bool watching_chunks = false;  // the idle transfers' timer is armed
  bool authenticating = false;   // an external validator is being asked
  bool from_bus = false;         // a PRODUCE the bus bridged in (surfaces/bus/tyo_bridge.h): not bridged back

 private:
  std::unique_ptr<Holdings> holdings_;
};

}  // namespace siomq::surfaces
