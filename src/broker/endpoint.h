// An endpoint: whatever the engine delivers to — a tyo-mq socket today; a bus socket, an SSE stream, a
// `/remote` peer or another cluster node next. The engine decides who gets what and hands each endpoint
// a protocol-neutral Delivery or Presence; the endpoint's surface shapes it on its wire (event names,
// the ACK fields, chunking). The engine never looks at what kind of endpoint it holds.
//
// Threading: deliver, notify, when_sent and close are called from any thread (routing runs on the
// publisher's worker, stored copies go out from the durable queues' thread); an implementation hands
// the work to its own connection's thread. socket_id() is immutable. The engine holds endpoints by
// shared_ptr for as long as a name or a copy in flight is bound to them; an endpoint whose connection
// is gone drops what it is given (and answers when_sent with false).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace siomq::broker {

// The wire form of a delivery, made by the first endpoint of a surface that a fan-out reaches and reused
// by the next endpoints of that surface (a message to 50 consumers under one key is encoded once).
class DeliveryEncoding {
 public:
  virtual ~DeliveryEncoding() = default;
};

// One copy of a message for one endpoint. The views are valid for the call only.
struct Delivery {
  Delivery(std::string_view k, std::string_view p, std::span<const std::string> a) : key(k), payload(p), attachments(a) {}
  std::string_view key;       // the subscription key (or subject) the copy was routed under
  std::string_view payload;   // the message as its surface stored it (JSON text)
  std::span<const std::string> attachments;  // its binary attachments, in placeholder order
  std::string_view msg_id;    // the id an ACK names (ACK mode), else empty
  int attempt = 0;            // ACK mode: the delivery attempt, 1 for the first; 0 without ACK
  bool whole = false;         // sent as one message however long (tyo-mq: a broadcast to the realm, §4.6)
  std::string_view delivery_id;  // a live copy's message id as SSE names it (tyo-mq §9: PRODUCE.id), or empty
  // Shared by the endpoints one fan-out reaches, see DeliveryEncoding; null until the first encodes.
  mutable std::shared_ptr<const DeliveryEncoding> encoding;
};

// A presence change for one endpoint to hear of (tyo-mq §4.3). The surface names and shapes it.
struct Presence {
  enum class Kind : uint8_t {
    replaced,      // the recipient's producer name was taken over by another connection
    subscribed,    // a consumer subscribed to the recipient (a producer), under `keys`
    connected,     // a peer the recipient is linked to came online
    disconnected,  // ... went offline
  };
  Kind kind = Kind::connected;
  std::string to_id;            // the recipient's own id (its producer's or consumer's), which names the event
  std::string name;             // the peer's name
  bool peer_is_producer = false;  // connected / disconnected: the peer is a producer, else a consumer
  std::string peer_socket;      // the peer's socket id (empty when it has none)
  std::string peer_id;          // subscribed: the consumer's id; connected: a consumer peer's id
  std::vector<std::string> keys;  // subscribed: the subscription keys
  bool online = false;          // subscribed: whether the consumer is online
};

class Endpoint {
 public:
  virtual ~Endpoint() = default;
  virtual const std::string& socket_id() const = 0;
  // Sends one copy; copies given to one endpoint leave in the order given.
  virtual void deliver(const Delivery& delivery) = 0;
  // Tells the endpoint of a presence change.
  virtual void notify(const Presence& presence) = 0;
  // `done(true)` once everything given to this endpoint so far has reached its transport (written to the
  // socket, or taken by a long-poll response); `done(false)` when it closed first. Every receipt asked for
  // is answered exactly once, possibly from a destructor: the durable queues rely on it.
  virtual void when_sent(std::function<void(bool sent)> done) = 0;
  // Ends the connection (a removed realm disconnects its clients).
  virtual void close() = 0;
};
using EndpointPtr = std::shared_ptr<Endpoint>;

// A presence change and who hears it.
struct Notice {
  EndpointPtr to;
  Presence presence;
};

}  // namespace siomq::broker
