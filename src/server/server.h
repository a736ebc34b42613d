// The siomq-server process, assembled: settings, the store and its writer, the worker pool, the
// Socket.IO server with the surfaces on it, the broker and its durable queues, the Engine.IO server and
// the listener, and the main thread's loop (signals and a once-a-second tick). main.cc only reads the
// command line into ServerOptions.
//
// Construction, in this order (each part uses the ones before it, and they are members in this order):
// settings (file, environment, command line) → live settings → the store backend, loaded → writer →
// worker pool → Socket.IO server → broker → durable queues, the E2EE key directory and the SSE history
// (restored from what the store held; the queues started) → surfaces → the cluster link → Engine.IO server → listener (bound, not accepting yet). The TLS certificate and key are
// loaded first of all. A failure throws, before anything is served: net::TlsError for TLS files
// (net::kTlsExitCode), store::StoreError when the store cannot be opened (the process exits with
// kStoreExitCode), another std::exception otherwise.
//
// start() joins the cluster (waiting up to 3 s for its settings) and starts the workers and accepting; run() is the surfaces' first housekeeping (expired realms go
// before any client comes), start(), the main loop until SIGTERM or SIGINT (SIGHUP and a changed
// settings file reload the settings; SIGHUP also reloads the TLS certificate and key), then stop().
//
// Teardown, stop(): stop accepting → close every session, their queued frames flushed first (up to
// 0.6 s) → stop the workers → stop the durable queues → stop the writer, so that whatever was submitted
// to the store is written. stop() is the end of the process: its watchdog exits the process 4.5 s later
// if main has not returned by then. The destructor frees the parts in the reverse order of their
// construction; the store backend goes last.
//
// Threads: construct, run and stop from one thread (the main thread: it handles the signals). The
// workers serve the connections; the main loop opens a store for set_persistence.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "auth/live_settings.h"
#include "broker/interest_ledger.h"
#include "net/http_connection.h"
#include "server/settings.h"
#include "surfaces/remote/remote_surface.h"
#include "surfaces/tyo_mq/surface.h"

namespace siomq::store {
class Backend;
class Writer;
}  // namespace siomq::store
namespace siomq::net {
class EngineServer;
class Listener;
class SioServer;
class TlsContext;
class WorkerPool;
}  // namespace siomq::net
namespace siomq::surfaces::bus {
struct BusOptions;
}  // namespace siomq::surfaces::bus
namespace siomq::broker {
class Broker;
class DurableQueues;
class KeyDirectory;
class Streams;
}  // namespace siomq::broker
namespace siomq::surfaces::http {
class SseHistory;
}  // namespace siomq::surfaces::http
namespace siomq::cluster {
class Cluster;
}  // namespace siomq::cluster

namespace siomq::server {

class DurableMoves;

// What the command line decides; the settings file decides the rest.
struct ServerOptions {
  std::string host = "0.0.0.0";
  uint16_t port = 17352;
  std::string settings_file;
  std::string data_dir = "./data";
  bool data_dir_given = false;  // --data-dir on the command line wins over storage_options.path
  std::string storage;          // overrides the settings' `storage`
  std::string sync = "batch";
  unsigned sync_window_us = 2000;
  unsigned threads = 0;  // 0: one per core
  // Durable queues threads (QueueOptions::shards). 0: one per four I/O threads, at least one.
  unsigned queue_threads = 0;
  bool diagnostics = false;
  // TLS from the command line: --tls-cert and --tls-key (both or neither) replace the settings' tls
  // cert and key; --tls-port its port.
  std::string tls_cert;
  std::string tls_key;
  std::optional<uint16_t> tls_port;
  // --console and --console-port: the web console on, and its port (over the settings' console block).
  bool console = false;
  std::optional<uint16_t> console_port;
};

class Server {
 public:
  explicit Server(ServerOptions options);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  void start();
  // start(), then serves until SIGTERM or SIGINT, then stop(). Returns the exit code.
  int run();
  void stop();

 private:
  void open_store();
  void start_queues();
  void register_surfaces();
  // The cluster (§10), when enabled: relayed messages, shared settings and nonces wired to the surfaces.
  void join_cluster();
  void listen();
  void listen_console();
  // The TLS context, when TLS is configured; throws net::TlsError for files that cannot be used.
  void load_tls();
  // set_persistence's move: the target is opened and checked on the main loop (it may block), the queues
  // copy everything into it, and the old backend is closed once the writer has switched.
  void move_store(surfaces::StoreTarget target, std::function<void(const Status&)> done);
  void on_signal(const boost::system::error_code& ec, int signal);
  void on_tick(const boost::system::error_code& ec);

  ServerOptions options_;
  Settings settings_;
  // Auth, limits and idle eviction are read live from here on; management commands write it back.
  auth::LiveSettings live_;
  // The parts below are built in the constructor's body, in this order (the store is loaded before the
  // writer starts); they are pointers only for that.
  std::unique_ptr<store::Backend> backend_;
  std::unique_ptr<store::Backend> next_backend_;  // during a set_persistence move; outlives the writer
  // The E2EE key directory and HTTP publish's SSE history (built after the writer they write through,
  // declared before it so that the writer, stopped and destroyed first, runs its last callbacks while
  // they still exist).
  std::unique_ptr<broker::KeyDirectory> keys_;
  std::unique_ptr<surfaces::http::SseHistory> sse_history_;
  // The bus's streams (their callbacks from the writer need them, like the two above).
  std::unique_ptr<broker::Streams> streams_;
  std::unique_ptr<surfaces::bus::BusOptions> bus_options_;  // read once, at start: the streams and the surface
  std::unique_ptr<store::Writer> writer_;
  unsigned threads_ = 0;
  std::unique_ptr<net::WorkerPool> pool_;
  std::unique_ptr<net::SioServer> sio_;
  // What this node's subscriptions want from the other nodes (in a cluster): the broker reports to it,
  // the cluster reads it; it outlives both.
  broker::InterestLedger interest_;
  std::unique_ptr<broker::Broker> broker_;
  std::unique_ptr<broker::DurableQueues> queues_;
  boost::asio::io_context main_io_;  // the main thread's loop
  surfaces::TyoMqSurface tyo_mq_;
  remote::RemoteSurface remote_;
  // This node's link to the others (cluster.enabled); null on a node alone. Its handlers use the
  // surfaces and the live settings, so it goes before them.
  std::shared_ptr<cluster::Cluster> cluster_;
  // Durable queues across nodes (storage "redis" in a cluster): moves and adoptions of store sections.
  std::unique_ptr<DurableMoves> moves_;
  std::unique_ptr<net::EngineServer> engine_;
  net::HttpRoutes routes_;
  std::function<void()> http_publish_sweep_;  // HTTP publish's expired tickets, swept once a second
  std::unique_ptr<net::TlsContext> tls_;        // null: no TLS
  std::unique_ptr<net::Listener> listener_;      // the main port (TLS unless tls.port is given)
  std::unique_ptr<net::Listener> tls_listener_;  // tls.port: the second port, TLS
  // The web console's port (console.enabled): its pages, and Engine.IO sessions marked as the console's.
  net::HttpRoutes console_routes_;
  std::unique_ptr<net::Listener> console_listener_;
  // Caught from the end of construction on (until then a TERM ends the process): a TERM or HUP right
  // after the "listening" line is handled, not fatal.
  std::optional<boost::asio::signal_set> signals_;
  boost::asio::steady_timer tick_;
};

}  // namespace siomq::server
