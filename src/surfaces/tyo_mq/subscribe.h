// Subscribing on the tyo-mq surface: SUBSCRIBE (§3.3; a durable subscription is stored and every
// SUBSCRIBE replays what is stored for it, §5.4), UNSUBSCRIBE (§0 row 4) and ACK (§3.7) of a delivered
// copy. A consumer name belongs to the connection bound to it (issue 12).
//
// Threading: handlers run on the requester's worker; ACK's answer may come from the store's thread.
#pragma once

#include "surfaces/reply.h"
#include "surfaces/request.h"
#include "surfaces/session.h"
#include "surfaces/tyo_mq/context.h"

namespace siomq::surfaces {

void on_subscribe(Context& ctx, Session& session, const Request& request, Reply& reply);
// A key string, or {event, producer, consumer}.
void on_unsubscribe(Context& ctx, Session& session, const Request& request, Reply& reply);
// Every outcome goes out as ACK_OK / ACK_FAIL and as the answer, if one is awaited.
void on_ack(Context& ctx, Session& session, const Request& request, Reply& reply);

}  // namespace siomq::surfaces
