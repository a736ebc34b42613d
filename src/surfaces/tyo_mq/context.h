// What every handler of the tyo-mq surface reaches: the engine, the live settings, and the state the
// surface keeps per server (nonces, enrolments, live sockets, the store's default TTL).
//
// Ownership: one Context per server, made by register_tyo_mq and held (shared_ptr) by every handler of
// namespace "/" and by the housekeeping callback it returns. The broker, the durable queues, the key
// directory and the live settings it refers to are owned by server::Server (server/server.h) and must outlive the SioServer whose
// handlers hold the Context, and any callback still pending on the durable queues.
//
// Threading: the engine objects and `settings` are thread-safe; `sessions`, `nonces` and `enrolment` lock
// inside; `default_ttl_ms` and `moving_store` are atomics; the housekeeping clocks belong to its caller.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <memory>
#include <optional>

#include "auth/enrolment.h"
#include "auth/live_settings.h"
#include "auth/manager_proof.h"
#include "broker/broker.h"
#include "cluster/bus_relay.h"
#include "cluster/link.h"
#include "surfaces/gate.h"
#include "surfaces/session_registry.h"
#include "surfaces/tyo_mq/surface.h"
#include "wire/clock.h"

namespace siomq::broker {
class DurableQueues;
class KeyDirectory;
}  // namespace siomq::broker

namespace siomq::surfaces {

struct Context : std::enable_shared_from_this<Context> {
  Context(broker::Broker& b, broker::DurableQueues& q, broker::KeyDirectory& k, auth::LiveSettings& s, TyoMqOptions o)
      : broker(b), queues(q), keys(k), settings(s), options(std::move(o)) {
    set_default_ttl(options.default_ttl_ms);
  }
  // The store's default TTL (§5.5), changed by set_persistence while handlers read it.
  std::optional<int64_t> default_ttl() const {
    int64_t v = default_ttl_ms.load(std::memory_order_relaxed);
    return v < 0 ? std::nullopt : std::optional<int64_t>(v);
  }
  void set_default_ttl(std::optional<int64_t> ttl) { default_ttl_ms.store(ttl ? *ttl : -1, std::memory_order_relaxed); }
  GateScope gate() { return {broker, sessions}; }

  broker::Broker& broker;
  broker::DurableQueues& queues;
  broker::KeyDirectory& keys;  // the E2EE directories (e2ee.h)
  auth::LiveSettings& settings;
  TyoMqOptions options;
  auth::NonceCache nonces;
  auth::Enrolment enrolment;
  SessionRegistry sessions;  // the sockets on "/"
  std::atomic<int64_t> default_ttl_ms{-1};  // -1: never
  std::atomic<bool> moving_store{false};
  // HTTP publish's SSE history (surfaces/http/sse_history.h), told of every guaranteed PRODUCE with its
  // delivery id before it is routed; `done` runs once the history has it on disk (or failed), on the
  // store's writer thread. False (and `done` never runs) when the store is behind: the PRODUCE is refused
  // before it is routed. Set before the server serves; empty when http_publish is off (then live copies
  // carry no delivery id unless PRODUCE named one).
  std::function<bool(const std::string& realm, std::string_view event, std::string_view id, std::string_view payload,
                     std::function<void(const Status&)> done)>
      on_guaranteed;
  // The bus's tyo bridge (surfaces/bus/tyo_bridge.h): told of every routed, non-broadcast PRODUCE with
  // its raw `message` JSON, on the producer's worker. Set before the server serves; may be empty.
  std::function<void(const std::string& realm, std::string_view event, std::string_view from, std::string_view message)>
      to_bus;
  // The bus surface's handler of a bus message relayed from another node (surfaces/bus/cluster_bus.h), on
  // the cluster thread. Set before the server serves; may be empty.
  std::function<void(const cluster::BusRelayed&)> bus_relayed;
  // Told of a realm removed (remove_realm, an expired ephemeral realm), after its sockets are closed:
  // HTTP publish drops its SSE history. Set before the server serves; may be empty.
  std::function<void(const std::string& realm)> on_realm_removed;
  // The cluster (cluster/link.h), when this node is one of several: every routed PRODUCE goes to the
  // other nodes, a manager proof's nonce is claimed cluster-wide before the command runs, enrolment
  // requests are shared. Set before the server serves; null on a node alone.
  std::shared_ptr<cluster::Link> cluster;
  std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();
  // housekeeping()'s clocks (steady ms), touched by its one caller only.
  int64_t last_ephemeral_sweep_ms = 0, last_idle_sweep_ms = 0;
};

}  // namespace siomq::surfaces
