#include "surfaces/tyo_mq/surface.h"

#include <spdlog/spdlog.h>

#include <chrono>
#include <string>

#include "net/sio_server.h"
#include "surfaces/socketio_reply.h"
#include "surfaces/tyo_mq/answers.h"
#include "surfaces/tyo_mq/auth.h"
#include "surfaces/tyo_mq/connection.h"
#include "surfaces/tyo_mq/e2ee.h"
#include "surfaces/tyo_mq/context.h"
#include "surfaces/tyo_mq/housekeeping.h"
#include "surfaces/tyo_mq/management.h"
#include "surfaces/tyo_mq/ping.h"
#include "surfaces/tyo_mq/publish.h"
#include "surfaces/tyo_mq/registration.h"
#include "surfaces/tyo_mq/requests.h"
#include "surfaces/tyo_mq/socket_adapter.h"
#include "surfaces/tyo_mq/socket_endpoint.h"
#include "surfaces/tyo_mq/subscribe.h"
#include "wire/clock.h"
#include "wire/json_spans.h"
#include "wire/log_text.h"
#include "wire/socketio.h"

namespace siomq::surfaces {

TyoMqSurface register_tyo_mq(net::SioServer& sio, broker::Broker& broker, broker::DurableQueues& queues,
                             broker::KeyDirectory& keys, auth::LiveSettings& settings, TyoMqOptions options) {
  auto ctx = std::make_shared<Context>(broker, queues, keys, settings, std::move(options));
  net::Namespace ns;
  ns.name = "/";
  ns.on_connect = [ctx](net::Socket& socket, std::string_view) -> std::optional<std::string> {
    on_connect(*ctx, socket);
    return std::nullopt;
  };
  // PING: the ack callback receives the JSON *string* of the payload plus pong and timestamp (§3.8).
  // PING, QUIT, HELLO and DEBUG pass the gate with an empty role list (§3): open realms, implicit grants
  // and the roles admin, manager and both.
  auto open_gate = [ctx](net::Socket& socket, const net::Message& msg, std::string_view event) {
    SocketReply reply(socket, msg.ack_id, keep_socket_reply);
    return admit(ctx->gate(), ctx->settings.current(), *endpoint_of(socket), reply, event, {});
  };
  ns.handlers["PING"] = [open_gate](net::Socket& socket, const net::Message& msg) {
    if (!open_gate(socket, msg, "PING") || !msg.ack_id) return;
    std::string reply = ping_reply(msg.json, iso_timestamp(std::chrono::system_clock::now()));
    std::string args = "[";
    sio::append_json_string(args, reply);
    args.push_back(']');
    socket.ack(*msg.ack_id, args);
  };
  ns.handlers["PRODUCER"] = socket_handler(ctx, on_producer);
  ns.handlers["CONSUMER"] = socket_handler(ctx, on_consumer);
  ns.handlers["SUBSCRIBE"] = socket_handler(ctx, on_subscribe);
  ns.handlers["UNSUBSCRIBE"] = socket_handler(ctx, on_unsubscribe);
  ns.handlers["PRODUCE"] = socket_handler(ctx, on_produce);
  ns.handlers["PRODUCE_CHUNK"] = socket_handler(ctx, on_produce_chunk);
  ns.handlers["ACK"] = socket_handler(ctx, on_ack);
  // E2EE directories (§12); sealed sender and push are not offered (§0 row 13: 501).
  ns.handlers["KEY_PUBLISH"] = socket_handler(ctx, on_key_publish);
  ns.handlers["KEY_LOOKUP"] = socket_handler(ctx, on_key_lookup);
  ns.handlers["PREKEY_PUBLISH"] = socket_handler(ctx, on_prekey_publish);
  ns.handlers["PREKEY_TAKE"] = socket_handler(ctx, on_prekey_take);
  for (const char* event : {"SEALED_CERT_REQUEST", "SEALED_UAK_SET", "SEALED_DELIVER", "SEALED_SUBSCRIBE"})
    ns.handlers[event] = socket_handler(ctx, on_sealed_sender);
  for (const char* event : {"PUSH_REGISTER", "PUSH_UNREGISTER"}) ns.handlers[event] = socket_handler(ctx, on_push);
  // QUIT: the payload must be the socket's own id; the server then disconnects it.
  ns.handlers["QUIT"] = [open_gate](net::Socket& socket, const net::Message& msg) {
    if (!open_gate(socket, msg, "QUIT")) return;
    auto args = json_spans::array_elements(msg.json);
    if (args && args->size() >= 2 && json_spans::unescape((*args)[1]).value_or("") == socket.id()) return socket.disconnect(true);
    SocketReply reply(socket, msg.ack_id, keep_socket_reply);
    reply_error(reply, Error{kMalformedRequest, "QUIT: the payload must be this socket's id"});
  };
  // HELLO and DEBUG are logged only.
  ns.handlers["HELLO"] = [open_gate](net::Socket& socket, const net::Message& msg) {
    if (!open_gate(socket, msg, "HELLO")) return;
    std::string storage;
    SocketReply reply(socket, msg.ack_id, keep_socket_reply);
    auto object = request_object_or_error(request_of(msg), reply, storage);
    if (!object) return;
    spdlog::info("HELLO from {} ({}): {}", socket.id(), log_text(socket.remote_address()), log_text(*object));
  };
  ns.handlers["DEBUG"] = [open_gate](net::Socket& socket, const net::Message& msg) {
    if (!open_gate(socket, msg, "DEBUG")) return;
    spdlog::debug("DEBUG from {}: {}", socket.id(), msg.json);
  };
  register_auth_handlers(ctx, ns);
  register_management_handlers(ctx, ns);
  // Issue 12: events that carry a credential are paced per socket (key, token and proof guessing), and
  // the small control events count against the messages bucket wherever limits set one, like PRODUCE.
  for (const char* event : {"AUTHENTICATION", "AUTHORIZATION_REQUEST", "AUTHORIZATION_NEXT", "AUTHORIZATION_DECIDE",
                            "AUTH_MANAGEMENT_COMMAND"}) {
    ns.handlers[event] = [ctx, inner = std::move(ns.handlers[event])](net::Socket& s, const net::Message& m) {
      if (within_credential_rate(*ctx, s, m)) inner(s, m);
    };
  }
  for (const char* event : {"PING", "HELLO", "ACK", "UNSUBSCRIBE", "QUIT", "DEBUG", "KEY_PUBLISH", "KEY_LOOKUP",
                            "PREKEY_PUBLISH", "PREKEY_TAKE", "SEALED_CERT_REQUEST", "SEALED_UAK_SET", "SEALED_DELIVER",
                            "SEALED_SUBSCRIBE", "PUSH_REGISTER", "PUSH_UNREGISTER"}) {
    ns.handlers[event] = [ctx, inner = std::move(ns.handlers[event])](net::Socket& s, const net::Message& m) {
      SocketReply reply(s, m.ack_id, keep_socket_reply);
      if (within_rate(ctx->settings.current(), *endpoint_of(s), reply, m.json.size())) inner(s, m);
    };
  }
  ns.on_disconnect = [ctx](net::Socket& socket, std::string_view) { on_disconnect(*ctx, socket); };
  sio.add_namespace(std::move(ns));
  return {[ctx] { housekeeping(*ctx); }, ctx};
}

}  // namespace siomq::surfaces
