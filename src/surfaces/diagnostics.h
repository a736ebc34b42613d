// The /diagnostics namespace: transport self-tests (echo, server-side emits, rooms, floods).
// Off unless the settings enable it; it exercises the Socket.IO core without the broker.
#pragma once

namespace siomq::net {
class SioServer;
}

namespace siomq::surfaces {

inline constexpr const char* kDiagnosticsNamespace = "/diagnostics";

void register_diagnostics(net::SioServer& sio);

}  // namespace siomq::surfaces
