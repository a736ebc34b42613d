// How the tyo-mq surface's Socket.IO events reach handlers written over Session, Request and Reply
// (auth, management), and the gate for the handlers that still take a net::Socket (surface.cc).
//
// The socket's SocketEndpoint is its Session; a kept reply sends through that endpoint, so it holds the
// endpoint (not the socket) and answers nothing once the socket is gone.
#pragma once

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string_view>

#include "net/socket.h"
#include "surfaces/gate.h"
#include "surfaces/reply.h"
#include "surfaces/request.h"
#include "surfaces/session.h"
#include "surfaces/socketio_reply.h"
#include "surfaces/tyo_mq/context.h"
#include "surfaces/tyo_mq/socket_endpoint.h"

namespace siomq::surfaces {

// A handler of a request on any surface.
using RequestHandler = void (*)(Context& ctx, Session& session, const Request& request, Reply& reply);
// The Socket.IO handler that runs `handler` with the socket's endpoint, the event and the socket. It
// holds `ctx`.
std::function<void(net::Socket&, const net::Message&)> socket_handler(std::shared_ptr<Context> ctx, RequestHandler handler);
// The reply to the event with `ack_id` on `socket`, usable from any thread (SocketReply's Keeper).
std::shared_ptr<Reply> keep_socket_reply(net::Socket& socket, std::optional<uint64_t> ack_id);

// The gate (surfaces/gate.h) for a handler that has the socket and the message.
bool admit(Context& ctx, const auth::Snapshot& snap, net::Socket& socket, SocketEndpoint& endpoint,
           const net::Message& msg, std::string_view event, std::initializer_list<std::string_view> roles);
void rate_limited(net::Socket& socket, SocketEndpoint& endpoint, std::string_view reason, int64_t retry_after_s);
bool within_credential_rate(Context& ctx, net::Socket& socket, const net::Message& msg);

}  // namespace siomq::surfaces
