// Presence across a cluster's nodes (broker/peer_presence.h; docs/scale-out.md "Names and presence"):
// what a realm's clients did on this node that clients elsewhere hear of goes out as notes on
// <c>:presence (cluster/presence_note.h); each other node turns a note into its own clients' CONNECT-,
// DISCONNECT- and SUBSCRIBE-TO- events, and answers a producer coming online with the subscriptions its
// consumers hold. Best effort, as relayed messages are: while Redis is away nothing is sent or heard.
//
// Threading: share_presence from a worker under the realm's lock (Broker::share_presence), the note from
// the cluster thread.
#pragma once

#include <string>
#include <vector>

#include "broker/peer_presence.h"
#include "cluster/link.h"
#include "surfaces/tyo_mq/context.h"

namespace siomq::surfaces {

void share_presence(cluster::Link& link, const std::string& realm, const std::vector<broker::PeerPresence>& changes);
// A note on <c>:presence from another node (this node's own are ignored; so is a realm this node does not
// hold: nobody there to tell).
void on_presence_note(Context& ctx, const std::string& text);

}  // namespace siomq::surfaces
