// A socket on namespace "/" as the broker and the auth rules see it: what the tyo-mq surface keeps per
// socket (net::Socket::state), and how frames reach the socket from any thread.
//
// Ownership: the socket holds its endpoint (set_state); the broker's realms, the durable queues and the
// registry hold it too while the socket is bound there, so an endpoint can outlive its socket. It keeps
// only a weak reference to the socket: once the socket is gone, sends are dropped and receipts answered
// false. The worker it refers to outlives every socket (the server's worker pool).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "broker/endpoint.h"
#include "net/out_frame.h"
#include "net/socket.h"
#include "surfaces/session.h"
#include "surfaces/tyo_mq/delivery.h"

namespace siomq::net {
class Worker;
}

namespace siomq::surfaces {

// A socket on namespace "/" as the broker and the auth rules see it; its grant, rate buckets, counters,
// address, realms and chunk transfers are the Session's. `send`, `when_sent`, `notify` and `close` may
// be called from any thread; every other member is touched only on the socket's own worker.
class SocketEndpoint : public broker::Endpoint,
                       public Session,
                       public std::enable_shared_from_this<SocketEndpoint> {
 public:
  explicit SocketEndpoint(net::Socket& socket);
  ~SocketEndpoint() override;
  const std::string& socket_id() const override { return id_; }
  const std::string& id() const override { return id_; }
  net::Worker& worker() override { return worker_; }
  std::shared_ptr<Session> shared() override { return shared_from_this(); }
  broker::EndpointPtr endpoint() override { return shared_from_this(); }
  // Disconnects the socket and closes its connection now (net::Socket::disconnect), on the worker.
  void close_now() override;
  // The event as send() sends it.
  void notify(std::string_view event, std::string_view payload) override;

  // Sends on the socket's worker: directly when called there, else through the outbox.
  void send(FramesPtr frames);
  // The same for one text frame, made into a frame on the worker: a hot answer (stream.pub's) is then
  // one allocation on the sending thread, and its frame is allocated and freed on one thread.
  void send_text(std::string text);
  // broker::Endpoint: a copy as CONSUME-<key> (delivery.h), a presence change as its event.
  void deliver(const broker::Delivery& delivery) override;
  void notify(const broker::Presence& presence) override;
  // From any thread: `done` runs on the worker once everything sent through this endpoint before the
  // call has reached the transport (net::Socket::when_sent), or with false when the socket is gone.
  void when_sent(net::SentReceipt done) override;
  // Disconnects the socket (the whole connection), from any thread.
  void close() override;

 private:
  void drain_outbox();

  net::Worker& worker_;
  std::weak_ptr<net::Socket> socket_;
  std::string id_;
  // Frames sent from other threads (the durable queues): one post to the worker takes all of them.
  // A receipt rides in the same queue, so it is asked for after the frames sent before it.
  struct Outgoing {
    FramesPtr frames;         // frames to send, or
    std::string text;         // one text frame to send (when `frames` and `receipt` are empty), or
    net::SentReceipt receipt; // a receipt to ask for
    uint32_t read_us = 0;     // the text's read stamp (net/write_latency.h), kept across the hop
  };
  void post_outgoing(Outgoing item);
  // What other threads hand to this connection's worker, drained there in one handler. Allocated by the
  // first hand-off, so that a connection that only ever hears from its own worker (an idle one, a
  // producer) carries a pointer instead of a mutex and a vector (docs/performance.md, "An idle
  // connection"). Owned; freed with the endpoint.
  struct Outbox {
    std::mutex mu;
    std::vector<Outgoing> items;
  };
  Outbox& outbox();
  std::atomic<Outbox*> outbox_{nullptr};
};

std::shared_ptr<SocketEndpoint> endpoint_of(net::Socket& socket);

}  // namespace siomq::surfaces
