#include "surfaces/tyo_mq_surface.h"

#include "net/sio_server.h"
#include "surfaces/ping.h"
#include "wire/socketio.h"

namespace siomq::surfaces {

void register_tyo_mq(net::SioServer& sio) {
  net::Namespace ns;
  ns.name = "/";
  // PING: the ack callback receives the JSON *string* of the payload plus pong and timestamp (§3.8).
  ns.handlers["PING"] = [](net::Socket& socket, const net::Message& msg) {
    if (!msg.ack_id) return;
    std::string reply = ping_reply(msg.json, iso_timestamp(std::chrono::system_clock::now()));
    std::string args = "[";
    sio::append_json_string(args, reply);
    args.push_back(']');
    socket.ack(*msg.ack_id, args);
  };
  sio.add_namespace(std::move(ns));
}

}  // namespace siomq::surfaces
