// The tyo-mq protocol on namespace "/" (shared/protocol/tyo-mq.md): PING, PRODUCER, CONSUMER, SUBSCRIBE,
// UNSUBSCRIBE, PRODUCE with exact, topic and group routing, presence, and durable delivery with ACK
// through the durable queues (§5). Auth is not there yet: every
// socket is in realm "default" with role "both".
#pragma once

#include <cstdint>
#include <memory>
#include <optional>

namespace siomq::net {
class SioServer;
}
namespace siomq::broker {
class Broker;
class DeliverySink;
class DurableQueues;
}  // namespace siomq::broker

namespace siomq::surfaces {

struct TyoMqOptions {
  std::optional<int64_t> default_ttl_ms = 86400 * 1000LL;  // the store's default TTL (§5.5); nullopt: never
};

// How the durable queues send stored copies to tyo-mq consumers.
std::unique_ptr<broker::DeliverySink> make_tyo_mq_sink();
void register_tyo_mq(net::SioServer& sio, broker::Broker& broker, broker::DurableQueues& queues, TyoMqOptions options);

}  // namespace siomq::surfaces
