// A relay namespace (tyo-mq §12): /remote, and the configured ones, which share this code and differ only
// in their rules and caps (relay_settings.h).
//
// A socket connects, then sends `auth {ticket, session_id?, role?}` (an object or a JSON string). A
// ticket that exists, is unexpired, was minted for this namespace and matches the given session id and
// role joins the socket to its session — in the ticket's realm — and answers `auth_ok {session_id,
// role}`; anything else answers `auth_error {message}` and disconnects (the whole connection, as the
// reference's disconnect(true)). A socket that has not authenticated within `auth_timeout_ms` is
// disconnected from the namespace. Until then nothing it sends is relayed.
//
// After auth every event goes through the namespace's rule table (relay_rules.h) and, if relayed, to the
// other side's room of the same session, never back to the sender; within the per-socket rate (events
// and bytes, RATE_LIMITED {code:429, reason, retry_after} at most once a second) and the size caps.
//
// Threading: the handlers run on the socket's worker; the shared parts lock inside.
#pragma once

#include <memory>

#include "auth/live_settings.h"
#include "net/sio_server.h"
#include "surfaces/remote/live_relay_settings.h"
#include "surfaces/remote/relay_sessions.h"
#include "surfaces/remote/ticket_store.h"

namespace siomq::remote {

// What every relay namespace and the ticket request share: one per server, held by their handlers.
struct RelayContext {
  RelayContext(net::SioServer& s, auth::LiveSettings& live) : sio(s), settings(live) {}
  net::SioServer& sio;
  LiveRelaySettings settings;
  TicketStore tickets;
  RelaySessions sessions;
};

// The handlers of a relay namespace. `name` is the namespace's name, or empty for the fallback
// namespace, which serves whichever configured namespace the live settings name (and refuses others).
net::Namespace relay_namespace(std::shared_ptr<RelayContext> ctx, std::string name);

}  // namespace siomq::remote
