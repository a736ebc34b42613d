// The tyo-mq protocol on namespace "/" (shared/protocol/tyo-mq.md): PING, PRODUCER, CONSUMER, SUBSCRIBE,
// UNSUBSCRIBE, PRODUCE with exact, topic and group routing, presence, durable delivery with ACK through
// the durable queues (§5), realms, authentication and the gate (§6), enrolment (§7), signed management
// commands (§8), limits and idle eviction (§11).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "wire/result.h"

namespace siomq::net {
class SioServer;
}
namespace siomq::broker {
class Broker;
class DurableQueues;
class KeyDirectory;
}  // namespace siomq::broker
namespace siomq::auth {
class LiveSettings;
}

namespace siomq::surfaces {

struct Context;

// Where management's set_persistence moves the durable store.
struct StoreTarget {
  std::string backend;  // memory, file or redis
  std::string path;     // file: the data directory ("" : the server's --data-dir)
  std::string url, prefix;  // redis
};
// Opens the target, checks that it holds nothing, and moves the live store there; `done` from any
// thread. The process provides it (opening a store may block).
using MoveStore = std::function<void(StoreTarget target, std::function<void(const Status&)> done)>;

struct TyoMqOptions {
  std::optional<int64_t> default_ttl_ms = 86400 * 1000LL;  // the store's default TTL (§5.5); nullopt: never
  MoveStore move_store;  // absent: set_persistence answers 501
};

// What register_tyo_mq hands back to the process.
struct TyoMqSurface {
  // The surface's housekeeping (expired ephemeral realms, idle eviction): call it about once a second
  // from one thread.
  std::function<void()> housekeeping;
  // The surface's state, for the other surfaces of the tyo-mq protocol that share it (HTTP, SSE,
  // /remote): they call the same handlers, gate and realms as namespace "/".
  std::shared_ptr<Context> context;
};

// Serves namespace "/".
//
// The handlers added to `sio` and the returned function hold references to `broker`, `queues`, `keys`
// and `settings` (through the surface's Context): the caller owns those and keeps them alive until `sio` has
// stopped and every callback it gave the durable queues has run. `options.move_store` is called from a
// worker thread and may answer from any thread.
TyoMqSurface register_tyo_mq(net::SioServer& sio, broker::Broker& broker, broker::DurableQueues& queues,
                             broker::KeyDirectory& keys, auth::LiveSettings& settings, TyoMqOptions options);

}  // namespace siomq::surfaces
