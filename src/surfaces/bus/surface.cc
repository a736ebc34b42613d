#include "surfaces/bus/surface.h"

#include <nlohmann/json.hpp>

#include <cstdlib>
#include <stdexcept>

#include "net/sio_server.h"
#include "surfaces/bus/bus_context.h"
#include "surfaces/bus/bus_stats.h"
#include "surfaces/bus/control.h"
#include "surfaces/bus/cluster_bus.h"
#include "surfaces/bus/core.h"
#include "surfaces/bus/streams_handlers.h"
#include "surfaces/bus/tyo_bridge.h"
#include "surfaces/tyo_mq/auth.h"
#include "surfaces/tyo_mq/socket_endpoint.h"

namespace siomq::surfaces::bus {
namespace {


// §3: the CONNECT auth payload {token, realm?} is checked exactly as AUTHENTICATION would check it; nobody
// hears the answer (§8.18: a failed one leaves the socket connected, and its bus events answer 401).
void authenticate_on_connect(BusContext& ctx, net::Socket& socket, std::string_view auth) {
  if (auth.empty() || auth.front() != '{' || auth.find("\"token\"") == std::string_view::npos) return;
  std::string args = "[\"AUTHENTICATION\",";
  args.append(auth);
  args.push_back(']');
  Request request{"AUTHENTICATION", args, {}, false};
  auto reply = std::make_shared<NoReply>();
  on_authentication(*ctx.tyo, *endpoint_of(socket), request, *reply);
}

using Handler = void (*)(BusContext&, net::Socket&, const net::Message&);
std::function<void(net::Socket&, const net::Message&)> handler(const std::shared_ptr<BusContext>& ctx, Handler h) {
  return [ctx, h](net::Socket& socket, const net::Message& msg) { h(*ctx, socket, msg); };
}

}  // namespace

BusOptions bus_options(const nlohmann::json& document, BusLimits* limits) {
  BusLimits ignored;
  BusLimits& l = limits ? *limits : ignored;
  auto count = [](const std::string& key, const nlohmann::json& v) {
    if (!v.is_number_integer() || v.get<int64_t>() < 1) throw std::runtime_error("bus." + key + " must be a positive integer");
    return v.get<uint64_t>();
  };
  BusOptions o;
  if (document.is_object() && document.contains("bus")) {
    const nlohmann::json& b = document.at("bus");
    if (!b.is_object()) throw std::runtime_error("bus must be an object");
    for (const auto& [key, value] : b.items()) {
      if (key == "enabled") {
        if (!value.is_boolean()) throw std::runtime_error("bus.enabled must be a boolean");
        o.enabled = value.get<bool>();
      } else if (key == "control_token") {
        if (!value.is_string()) throw std::runtime_error("bus.control_token must be a string");
        o.control_token = value.get<std::string>();
      } else if (key == "tyo_bridge_realms") {
        if (!value.is_array()) throw std::runtime_error("bus.tyo_bridge_realms must be an array of realm names");
        for (const auto& r : value) {
          if (!r.is_string() || r.get<std::string>().empty()) throw std::runtime_error("bus.tyo_bridge_realms must be an array of realm names");
          o.tyo_bridge_realms.push_back(r.get<std::string>());
        }
      } else if (key == "max_streams_per_realm") {
        l.max_streams_per_realm = count(key, value);
      } else if (key == "max_consumers_per_realm") {
        l.max_consumers_per_realm = count(key, value);
      } else if (key == "max_stream_bytes_per_realm") {
        l.max_stream_bytes_per_realm = count(key, value);
      } else if (key == "max_stream_bytes_total") {
        l.max_stream_bytes_total = count(key, value);
      } else {
        throw std::runtime_error("bus." + key + " is not a setting");
      }
    }
  }
  if (const char* env = std::getenv("SIOMQ_CONTROL_TOKEN"); env && *env) o.control_token = env;
  return o;
}

void register_bus(net::SioServer& sio, std::shared_ptr<Context> tyo, broker::Streams& streams, BusOptions options) {
  auto ctx = std::make_shared<BusContext>();
  ctx->tyo = std::move(tyo);
  ctx->streams = &streams;
  ctx->options = std::move(options);
  if (!ctx->options.enabled) return;
  sio.add_handler("/", "pub", handler(ctx, on_pub));
  sio.add_handler("/", "sub", handler(ctx, on_sub));
  sio.add_handler("/", "unsub", handler(ctx, on_unsub));
  sio.add_handler("/", "request", handler(ctx, on_request));
  sio.add_handler("/", "stream.pub", handler(ctx, on_stream_pub));
  sio.add_handler("/", "consumer.pull", handler(ctx, on_consumer_pull));
  sio.add_handler("/", "consumer.ack", handler(ctx, on_consumer_ack));
  sio.add_handler("/", "consumer.nak", handler(ctx, on_consumer_nak));
  sio.add_handler("/", "consumer.term", handler(ctx, on_consumer_term));
  sio.add_handler("/", "consumer.progress", handler(ctx, on_consumer_progress));
  sio.add_connect_hook("/", [ctx](net::Socket& socket, std::string_view auth) {
    bus_stats().connections.fetch_add(1, std::memory_order_relaxed);
    bus_stats().total_connections.fetch_add(1, std::memory_order_relaxed);
    authenticate_on_connect(*ctx, socket, auth);
  });
  sio.add_disconnect_hook("/", [ctx](net::Socket& socket, std::string_view) {
    bus_stats().connections.fetch_sub(1, std::memory_order_relaxed);
    on_bus_disconnect(*ctx, socket);
  });

  install_tyo_bridge(ctx);
  // A stream.pub's message reaches the core subscribers as a pub's does, on every node.
  streams.set_route_core([weak = std::weak_ptr<BusContext>(ctx)](const std::string& realm, const broker::BusMessagePtr& m) {
    if (auto ctx = weak.lock()) route_core(*ctx, realm, m);
  });
  ctx->tyo->bus_relayed = [weak = std::weak_ptr<BusContext>(ctx)](const cluster::BusRelayed& m) {
    if (auto ctx = weak.lock()) deliver_bus_relayed(*ctx, m);
  };

  net::Namespace control;
  control.name = "/control";
  control.on_connect = [ctx](net::Socket& socket, std::string_view auth) { return on_control_connect(*ctx, socket, auth); };
  control.handlers["stats"] = handler(ctx, on_stats);
  control.handlers["stream.create"] = handler(ctx, on_stream_create);
  control.handlers["stream.update"] = handler(ctx, on_stream_update);
  control.handlers["stream.delete"] = handler(ctx, on_stream_delete);
  control.handlers["stream.purge"] = handler(ctx, on_stream_purge);
  control.handlers["stream.info"] = handler(ctx, on_stream_info);
  control.handlers["stream.list"] = handler(ctx, on_stream_list);
  control.handlers["stream.get"] = handler(ctx, on_stream_get);
  control.handlers["consumer.add"] = handler(ctx, on_consumer_add);
  control.handlers["consumer.delete"] = handler(ctx, on_consumer_delete);
  control.handlers["consumer.info"] = handler(ctx, on_consumer_info);
  sio.add_namespace(std::move(control));
}

}  // namespace siomq::surfaces::bus
