// The bus (shared/protocol/bus.md): the data plane's events on namespace "/" beside tyo-mq's (pub, sub,
// unsub, request; stream and consumer events as they land) and the control plane on "/control".
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace siomq::net {
class SioServer;
}

namespace siomq::surfaces {
struct Context;
}
namespace siomq::broker {
class Streams;
}

namespace siomq::surfaces::bus {

struct BusOptions {
  bool enabled = true;
  // The control plane's own token (§8.1: settings `bus.control_token`, env SIOMQ_CONTROL_TOKEN); empty: none.
  std::string control_token;
  // Realms whose tyo-mq PRODUCEs and bus tyo.<P>.<E> subjects meet (surfaces/bus/tyo_bridge.h); none by default.
  std::vector<std::string> tyo_bridge_realms;
  // For `stats` (§5 StatsSnapshot): this server's id and version, and its slow consumers so far.
  std::string server_id;
  std::string version;
  std::function<uint64_t()> slow_consumers;
};

// The `bus` block's limits of the streams (max_streams_per_realm, max_consumers_per_realm,
// max_stream_bytes_per_realm, max_stream_bytes_total), read by bus_options into here.
struct BusLimits {
  uint64_t max_streams_per_realm = 100, max_consumers_per_realm = 1000;
  uint64_t max_stream_bytes_per_realm = 256ull << 20, max_stream_bytes_total = 1ull << 30;
};

// The `bus` block of the settings document (§8.1: enabled, control_token; SIOMQ_CONTROL_TOKEN overrides
// the token). Throws std::runtime_error on a malformed block.
BusOptions bus_options(const nlohmann::json& document, BusLimits* limits = nullptr);

// Adds the bus's handlers to namespace "/" (registered before by the tyo-mq surface, whose Context it
// shares) and the namespace "/control". Before the server starts.
// `streams` (the engine's, owned by the caller) must outlive `sio`'s handlers and every answer pending on it.
void register_bus(net::SioServer& sio, std::shared_ptr<Context> tyo, broker::Streams& streams, BusOptions options);

}  // namespace siomq::surfaces::bus
