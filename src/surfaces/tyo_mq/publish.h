// Publishing on the tyo-mq surface: PRODUCE (§3.5) and PRODUCE_CHUNK (§3.6). Each routed copy is sent
// live, stored, or both, as §5.1's table says; a broadcast (§4.6) is never stored. A PRODUCE that awaits
// an answer is confirmed after its stored copies are written, through the requester's kept Reply, in
// order with the deliveries sent to it.
//
// Each routed PRODUCE also goes to the other nodes of a cluster (Context::cluster).
//
// Threading: handlers run on the requester's worker; the confirm may come from the store's thread.
#pragma once

#include "surfaces/reply.h"
#include "surfaces/request.h"
#include "surfaces/session.h"
#include "surfaces/tyo_mq/context.h"

namespace siomq::surfaces {

void on_produce(Context& ctx, Session& session, const Request& request, Reply& reply);
// Pieces of a PRODUCE's JSON, joined in index order once `total` have arrived.
void on_produce_chunk(Context& ctx, Session& session, const Request& request, Reply& reply);
// A message another node of the cluster routed (cluster/cluster.h), delivered to this node's
// subscribers; any thread (the cluster's).
void deliver_relayed(Context& ctx, const cluster::RelayedMessage& m);

}  // namespace siomq::surfaces
