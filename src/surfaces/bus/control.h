// The control plane on namespace "/control" (bus.md §3, §5): who may join (the control token, an admin
// token for any realm chosen with "realm", a manager token for its own realm), and `stats`. The stream
// and consumer management events are added by the streams' surface.
//
// Threading: on the socket's worker.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "net/socket.h"
#include "surfaces/bus/bus_context.h"

namespace siomq::surfaces::bus {

// CONNECT on "/control": nullopt admits the socket (its realm is kept on its SocketEndpoint's grant),
// else the CONNECT_ERROR message ("unauthorized").
std::optional<std::string> on_control_connect(BusContext& ctx, net::Socket& socket, std::string_view auth);
// The realm a control socket manages.
const std::string& control_realm(net::Socket& socket);

void on_stats(BusContext& ctx, net::Socket& socket, const net::Message& msg);

}  // namespace siomq::surfaces::bus
