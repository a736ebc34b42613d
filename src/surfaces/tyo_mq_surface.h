// The tyo-mq protocol on namespace "/" (shared/protocol/tyo-mq.md): PING, PRODUCER, CONSUMER, SUBSCRIBE,
// UNSUBSCRIBE, PRODUCE with exact, topic and group routing, and presence. Auth is not there yet: every
// socket is in realm "default" with role "both".
#pragma once

namespace siomq::net {
class SioServer;
}
namespace siomq::broker {
class Broker;
}

namespace siomq::surfaces {

void register_tyo_mq(net::SioServer& sio, broker::Broker& broker);

}  // namespace siomq::surfaces
