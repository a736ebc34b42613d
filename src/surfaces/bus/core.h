// Core NATS-style messaging on namespace "/" (bus.md §4): pub, sub, unsub (with max) and request with
// inbox replies, 503 no responders and 408 timeout; and what a socket's end takes with it.
//
// Threading: on the socket's worker. Routing runs under the realm's lock (Sublist).
#pragma once

#include "net/socket.h"
#include "surfaces/bus/bus_context.h"

namespace siomq::surfaces::bus {

void on_pub(BusContext& ctx, net::Socket& socket, const net::Message& msg);
void on_sub(BusContext& ctx, net::Socket& socket, const net::Message& msg);
void on_unsub(BusContext& ctx, net::Socket& socket, const net::Message& msg);
void on_request(BusContext& ctx, net::Socket& socket, const net::Message& msg);
// The socket is gone: its subscriptions leave their realms and its requests stop waiting.
void on_bus_disconnect(BusContext& ctx, net::Socket& socket);

// Routes a published message in `realm` to the core subscribers (one per queue group), a stream binding
// the subject, and (unless it came from there) the tyo bridge; returns the core copies.
// In a cluster it also goes to the other nodes that want it (cluster_bus.h).
size_t publish_core(BusContext& ctx, const std::string& realm, const broker::BusMessagePtr& message, bool from_tyo = false);
// The core subscribers' part of publish_core (and of a stream.pub): copies here and the relay to the other
// nodes; `bound` (optional) says whether a stream here binds the subject. Returns the copies made here.
size_t route_core(BusContext& ctx, const std::string& realm, const broker::BusMessagePtr& message, bool* bound = nullptr);
// A stream of `realm` binding the message's subject stores it (§8.8), deduplicated by its Msg-Id header.
void capture_in_stream(BusContext& ctx, const std::string& realm, const broker::BusMessagePtr& message);

}  // namespace siomq::surfaces::bus
