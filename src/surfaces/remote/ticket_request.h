// REMOTE_TICKET_REQUEST on "/" (tyo-mq §12): {role:"agent"|"viewer", session_id?, machine_id?,
// namespace?} (an object or a JSON string) answers {ok:true, session_id, ticket, role, expires_in} both
// to the ack callback and as the event REMOTE_TICKET.
//
// It passes the §6.3 gate with an empty role list, as the reference: with auth on, an unauthenticated
// socket whose pending realm requires auth gets AUTH_FAIL 401 (and the answer {ok:false, code:401}); in a
// realm that requires auth only the roles both, manager and admin get tickets; open realms give anyone
// one. The ticket is bound to the socket's realm: the session it opens lives in that realm.
// A request that cannot be read, or past the ticket bounds, answers REMOTE_TICKET_FAIL {ok:false, code,
// message} and the same to the ack callback. Counted against the messages bucket (§11.1) like PING.
//
// Threading: on the requesting socket's worker.
#pragma once

#include "surfaces/remote/relay_namespace.h"
#include "surfaces/reply.h"
#include "surfaces/request.h"
#include "surfaces/session.h"
#include "surfaces/tyo_mq/context.h"

namespace siomq::remote {

void on_remote_ticket_request(surfaces::Context& tyo_mq, RelayContext& relay, surfaces::Session& session,
                              const surfaces::Request& request, surfaces::Reply& reply);

}  // namespace siomq::remote
