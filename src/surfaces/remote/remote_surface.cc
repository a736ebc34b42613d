#include "surfaces/remote/remote_surface.h"

#include <string>

#include "net/sio_server.h"
#include "surfaces/remote/relay_namespace.h"
#include "surfaces/remote/ticket_request.h"
#include "surfaces/socketio_reply.h"
#include "surfaces/tyo_mq/context.h"
#include "surfaces/tyo_mq/socket_adapter.h"
#include "surfaces/tyo_mq/socket_endpoint.h"
#include "wire/clock.h"

namespace siomq::remote {

RemoteSurface register_remote(net::SioServer& sio, std::shared_ptr<surfaces::Context> tyo_mq,
                              auth::LiveSettings& settings) {
  auto ctx = std::make_shared<RelayContext>(sio, settings);
  sio.add_namespace(relay_namespace(ctx, std::string(kRemoteNamespace)));
  sio.set_fallback_namespace(relay_namespace(ctx, {}));
  sio.add_handler("/", "REMOTE_TICKET_REQUEST", [ctx, tyo_mq](net::Socket& socket, const net::Message& msg) {
    surfaces::SocketReply reply(socket, msg.ack_id, surfaces::keep_socket_reply);
    on_remote_ticket_request(*tyo_mq, *ctx, *surfaces::endpoint_of(socket), surfaces::request_of(msg), reply);
  });
  return {[ctx] { ctx->tickets.sweep(steady_ms()); }};
}

}  // namespace siomq::remote
