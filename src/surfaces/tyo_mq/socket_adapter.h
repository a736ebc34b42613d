// How the tyo-mq surface's Socket.IO events reach handlers written over Session, Request and Reply
// (auth, management, publish, subscribe, registration), and the credential pacing of an event.
//
// The socket's SocketEndpoint is its Session; a kept reply sends through that endpoint, so it holds the
// endpoint (not the socket) and answers nothing once the socket is gone.
#pragma once

#include <cstdint>
#include <functional>
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

// surfaces/gate.h's within_credential_rate for the socket's session, answering on `msg`.
bool within_credential_rate(Context& ctx, net::Socket& socket, const net::Message& msg);

}  // namespace siomq::surfaces
