// Names on the tyo-mq surface: PRODUCER (§3.1) and CONSUMER (§3.2) bind a name in the requester's realm
// to its connection, within §11.1's caps; presence changes go to whoever watches the name. A name held
// by another live connection, or an anonymous one where the realm forbids it, ends the connection.
// In a cluster a consumer name is held by one connection across the nodes (claimed in Redis first,
// cluster/name_claims.h); a session's claims are released when it ends (release_claimed_names).
//
// Threading: on the requester's worker; drop_lost_name on any thread.
#pragma once

#include <string>

#include "surfaces/reply.h"
#include "surfaces/request.h"
#include "surfaces/session.h"
#include "surfaces/tyo_mq/context.h"

namespace siomq::surfaces {

void on_producer(Context& ctx, Session& session, const Request& request, Reply& reply);
void on_consumer(Context& ctx, Session& session, const Request& request, Reply& reply);
// In a cluster: claims the consumer name `name` cluster-wide for the session, once (CONSUMER, and a
// SUBSCRIBE that bound the name); another node holding it makes the session hear ERROR -3 and drop.
// may_claim: false when the session already waits on as many claims as it may (refuse the request).
void claim_consumer_name(Context& ctx, Session& session, Reply& reply, const std::string& realm, const std::string& name);
bool may_claim(const Session& session, const std::string& realm, const std::string& name);
// The session ended: its cluster-wide claims are released.
void release_claimed_names(Context& ctx, Session& session);
// Another node took a consumer name while Redis was away (Cluster::Handlers::name_lost): its holder here
// hears ERROR -3, as a newcomer would, and is disconnected.
void drop_lost_name(Context& ctx, const std::string& realm, const std::string& name);

}  // namespace siomq::surfaces
