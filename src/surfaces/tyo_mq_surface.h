// The tyo-mq protocol on namespace "/" (see shared/protocol/tyo-mq.md). So far: PING.
#pragma once

namespace siomq::net {
class SioServer;
}

namespace siomq::surfaces {

void register_tyo_mq(net::SioServer& sio);

}  // namespace siomq::surfaces
