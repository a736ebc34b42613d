// A socket on namespace "/" as the broker and the auth rules see it: what the tyo-mq surface keeps per
// socket (net::Socket::state), and how frames reach the socket from any thread.
//
// Ownership: the socket holds its endpoint (set_state); the broker's realms, the durable queues and the
// registry hold it too while the socket is bound there, so an endpoint can outlive its socket. It keeps
// only a weak reference to the socket: once the socket is gone, sends are dropped and receipts answered
// false. The worker it refers to outlives every socket (the server's worker pool).
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "auth/authentication.h"
#include "auth/limits.h"
#include "broker/realm.h"
#include "net/out_frame.h"
#include "net/socket.h"
#include "surfaces/tyo_mq/frames.h"
#include "surfaces/tyo_mq/produce_chunks.h"

namespace siomq::net {
class Worker;
}

namespace siomq::surfaces {

// A socket on namespace "/" as the broker and the auth rules see it. `send` and `close` may be called
// from any thread; every other member is touched only on the socket's own worker.
class SocketEndpoint : public broker::Endpoint, public std::enable_shared_from_this<SocketEndpoint> {
 public:
  explicit SocketEndpoint(net::Socket& socket);
  ~SocketEndpoint() override;
  const std::string& socket_id() const override { return id_; }
  net::Worker& worker() { return worker_; }

  // Sends on the socket's worker: directly when called there, else through the outbox.
  void send(FramesPtr frames);
  // From any thread: `done` runs on the worker once everything sent through this endpoint before the
  // call has reached the transport (net::Socket::when_sent), or with false when the socket is gone.
  void when_sent(net::SentReceipt done);
  // Disconnects the socket (the whole connection), from any thread.
  void close();

  // §2's tyoAuth and _pendingRealm. The socket's realm is the grant's, else "default".
  std::optional<auth::Grant> grant;
  std::optional<std::string> pending_realm;
  bool authenticating = false;  // an external validator is being asked
  const std::string& realm() const;

  // Every realm this socket registered or subscribed in: a disconnect takes it offline in each.
  std::set<std::string> realms;
  // Limits (§11.1): the rate buckets, the names and subscriptions this socket made, the last RATE_LIMITED.
  auth::TokenBucket messages, bytes, credentials;
  std::set<std::pair<std::string, std::string>> registrations;  // (realm, name)
  std::set<std::pair<std::string, std::string>> subscriptions;  // (realm, key + consumer)
  int64_t rate_limited_at_ms = 0;
  std::string ip;  // the address limits count (X-Forwarded-For's first hop when trust_proxy)

  // PRODUCE_CHUNK transfers in progress; dropped with the socket, or by a timer once idle.
  ChunkAssembler chunks;
  bool watching_chunks = false;  // that timer is armed

 private:
  void drain_outbox();

  net::Worker& worker_;
  std::weak_ptr<net::Socket> socket_;
  std::string id_;
  // Frames sent from other threads (the durable queues): one post to the worker takes all of them.
  // A receipt rides in the same queue, so it is asked for after the frames sent before it.
  struct Outgoing {
    FramesPtr frames;
    net::SentReceipt receipt;
  };
  void post_outgoing(Outgoing item);
  std::mutex outbox_mu_;
  std::vector<Outgoing> outbox_;
};

std::shared_ptr<SocketEndpoint> endpoint_of(net::Socket& socket);

}  // namespace siomq::surfaces
