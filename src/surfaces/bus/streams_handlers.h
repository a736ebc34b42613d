// The streams' events (bus.md §4, §5): stream.pub and consumer.pull/ack/nak/term/progress on "/", and the
// control plane's stream.* and consumer.* on "/control". Each validates its request in full, admits it
// (auth, role, rate) and hands it to broker::Streams, whose answer comes back on the streams thread and
// goes to the socket through its Answer.
//
// Threading: on the socket's worker.
#pragma once

#include "net/socket.h"
#include "surfaces/bus/bus_context.h"

namespace siomq::surfaces::bus {

void on_stream_pub(BusContext& ctx, net::Socket& socket, const net::Message& msg);
void on_consumer_pull(BusContext& ctx, net::Socket& socket, const net::Message& msg);
void on_consumer_ack(BusContext& ctx, net::Socket& socket, const net::Message& msg);
void on_consumer_nak(BusContext& ctx, net::Socket& socket, const net::Message& msg);
void on_consumer_term(BusContext& ctx, net::Socket& socket, const net::Message& msg);
void on_consumer_progress(BusContext& ctx, net::Socket& socket, const net::Message& msg);

void on_stream_create(BusContext& ctx, net::Socket& socket, const net::Message& msg);
void on_stream_update(BusContext& ctx, net::Socket& socket, const net::Message& msg);
void on_stream_delete(BusContext& ctx, net::Socket& socket, const net::Message& msg);
void on_stream_purge(BusContext& ctx, net::Socket& socket, const net::Message& msg);
void on_stream_info(BusContext& ctx, net::Socket& socket, const net::Message& msg);
void on_stream_list(BusContext& ctx, net::Socket& socket, const net::Message& msg);
void on_stream_get(BusContext& ctx, net::Socket& socket, const net::Message& msg);
void on_consumer_add(BusContext& ctx, net::Socket& socket, const net::Message& msg);
void on_consumer_delete(BusContext& ctx, net::Socket& socket, const net::Message& msg);
void on_consumer_info(BusContext& ctx, net::Socket& socket, const net::Message& msg);

}  // namespace siomq::surfaces::bus
