// The /remote surface (tyo-mq §12): REMOTE_TICKET_REQUEST on "/", the /remote relay namespace, and the
// configured relay namespaces of the settings' `namespaces` block, served by the Socket.IO server's
// fallback namespace so that adding or removing one in the settings applies within a second, without a
// restart. "/" and "/remote" are registered namespaces, so no configuration can take their place.
//
// Ownership: the handlers hold the surface's RelayContext; `sio`, the tyo-mq Context and `settings` must
// outlive `sio`'s handlers (server::Server owns them all).
#pragma once

#include <functional>
#include <memory>

namespace siomq::net {
class SioServer;
}
namespace siomq::auth {
class LiveSettings;
}
namespace siomq::surfaces {
struct Context;
}

namespace siomq::remote {

struct RemoteSurface {
  // Sweeps expired tickets; call it about once a second from one thread.
  std::function<void()> housekeeping;
};

// Registers /remote, the fallback namespace and REMOTE_TICKET_REQUEST (on "/", which register_tyo_mq
// must have added to `sio` already).
RemoteSurface register_remote(net::SioServer& sio, std::shared_ptr<surfaces::Context> tyo_mq,
                              auth::LiveSettings& settings);

}  // namespace siomq::remote
