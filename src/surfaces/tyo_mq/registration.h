// Names on the tyo-mq surface: PRODUCER (§3.1) and CONSUMER (§3.2) bind a name in the requester's realm
// to its connection, within §11.1's caps; presence changes go to whoever watches the name. A name held
// by another live connection, or an anonymous one where the realm forbids it, ends the connection.
//
// Threading: on the requester's worker.
#pragma once

#include "surfaces/reply.h"
#include "surfaces/request.h"
#include "surfaces/session.h"
#include "surfaces/tyo_mq/context.h"

namespace siomq::surfaces {

void on_producer(Context& ctx, Session& session, const Request& request, Reply& reply);
void on_consumer(Context& ctx, Session& session, const Request& request, Reply& reply);

}  // namespace siomq::surfaces
