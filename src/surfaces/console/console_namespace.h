// The web console's live data: the /console namespace, served only to sessions opened through the
// console's port (net::EngineSession::via_console). A visitor signs in with its CONNECT (console_auth.h),
// is told who it is (`hello` {role, realm, auth_enabled, version, node_id}), and then gets a `delta`
// once a second — {t, set:{key: value}, del:[key]} against what it was sent before, the first one whole —
// of the view console_view.h gathers for it. `watch` {realm|null} picks the realm whose detail it gets
// (a manager only its own), answered on its ack and sent at once.
//
// Bounds: at most kMaxSessions console sessions on the server (one more is refused), of which realm
// managers hold at most half and two per realm (so they cannot lock the admin out); one gathering in
// progress per session (a tick finding the last still running is skipped); refused CONNECTs paced per
// address (refusal_pace.h). Each tick checks the session's credential again (still_granted): a revoked
// token or a rotated manager key closes the session.
//
// Threading: events on the socket's worker; each session's timer runs there, and the gathered view comes
// back there before it is compared and sent.
#pragma once

#include "surfaces/console/console_view.h"

namespace siomq::net {
class SioServer;
}

namespace siomq::surfaces::console {

inline constexpr size_t kMaxSessions = 16;

// Adds "/console" to `sio` (before it serves). `parts` are kept for the server's life.
void register_console(net::SioServer& sio, ConsoleParts parts);

}  // namespace siomq::surfaces::console
