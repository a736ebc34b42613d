// The address a client's limits count it by (tyo-mq §11.1): the connection's peer, or — when the settings
// trust a proxy (`trust_proxy`) — the last hop of X-Forwarded-For, the one that proxy appended. Every hop
// before it is whatever the client wrote, so counting by the first would let a client pick its own
// address. A last hop that does not look like an IP address is ignored. Pure; linear in the header.
#pragma once

#include <string>
#include <string_view>

namespace siomq::surfaces {

std::string client_address(std::string_view peer, std::string_view forwarded_for, bool trust_proxy);

}  // namespace siomq::surfaces
