// A socket's life on namespace "/": on connect, its address, the implicit grant while auth is off (§2)
// and §11.1's per-address connection limits; on disconnect, every name it bound goes offline in every
// realm it used and its ACK timers stop.
//
// Threading: on the socket's worker.
#pragma once

#include "net/socket.h"
#include "surfaces/tyo_mq/context.h"

namespace siomq::surfaces {

void on_connect(Context& ctx, net::Socket& socket);
void on_disconnect(Context& ctx, net::Socket& socket);

}  // namespace siomq::surfaces
