#include "server/server.h"

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <atomic>
#include <thread>

#include "broker/broker.h"
#include "broker/durable_queues.h"
#include "broker/key_directory.h"
#include "broker/streams.h"
#include "cluster/cluster.h"
#include "cluster/presence_note.h"
#include "cluster/realm_note.h"
#include "net/engine_server.h"
#include "net/inbound_budget.h"
#include "net/listener.h"
#include "surfaces/console/console_http.h"
#include "surfaces/console/console_namespace.h"
#include "net/sio_server.h"
#include "net/tls_context.h"
#include "net/worker_pool.h"
#include "store/store.h"
#include "store/writer.h"
#include "surfaces/bus/surface.h"
#include "surfaces/diagnostics.h"
#include "surfaces/http/api.h"
#include "surfaces/http/metrics.h"
#include "surfaces/http/http_publish.h"
#include "surfaces/http/sse_history.h"
#include "surfaces/tyo_mq/cluster_keys.h"
#include "surfaces/tyo_mq/cluster_presence.h"
#include "surfaces/tyo_mq/context.h"
#include "surfaces/tyo_mq/delivery.h"
#include "surfaces/tyo_mq/enrolment.h"
#include "surfaces/tyo_mq/produce_chunks.h"
#include "surfaces/tyo_mq/publish.h"
#include "surfaces/tyo_mq/realm_disposal.h"
#include "surfaces/tyo_mq/registration.h"
#include "surfaces/tyo_mq/stored_subscription.h"
#include "server/durable_moves.h"
#include "cluster/durable_homes.h"
#include "auth/hmac.h"

namespace siomq::server {
namespace {

// The settings file (if any), the environment, then the command line.
Settings load_settings(const ServerOptions& opt) {
  Settings settings;
  if (!opt.settings_file.empty()) settings = load_settings_file(opt.settings_file);
  apply_environment(settings);
  if (opt.diagnostics) settings.diagnostics = true;
  if (opt.console || opt.console_port) settings.console.enabled = true;
  if (opt.console_port) settings.console.port = *opt.console_port;
  if (!opt.storage.empty()) settings.storage.backend = opt.storage == "sqlite" ? "file" : opt.storage;
  return settings;
}

// Opens the store that `backend` names; throws store::StoreError.
std::unique_ptr<store::Backend> open_backend(const std::string& backend, const std::string& data_dir, const std::string& url,
                                             const std::string& prefix) {
  if (backend == "memory") return store::open_memory();
  if (backend == "redis") return store::open_redis(url, prefix);
  return store::open_file(data_dir);
}

// The auth store the settings name (auth_store), opened; none without the setting. Throws when it cannot
// be opened: a start-up error naming the path.
std::unique_ptr<auth::AuthStore> open_auth_store(const Settings& settings) {
  auto path = settings.document ? auth::auth_store_path(*settings.document) : std::nullopt;
  return path ? auth::AuthStore::open(*path) : nullptr;
}

}  // namespace

Server::Server(ServerOptions options)
    : options_(std::move(options)),
      settings_(load_settings(options_)),
      live_(settings_.document ? *settings_.document : nlohmann::json::object(), options_.settings_file,
            [](const nlohmann::json& doc) { settings_from_json(doc); }, open_auth_store(settings_)),
      tick_(main_io_) {
  load_tls();
  if (auto line = live_.bootstrap_admin_token(); !line.empty()) spdlog::info("{}", line);
  open_store();
  start_queues();
  register_surfaces();
  join_cluster();
  listen();
  signals_.emplace(main_io_, SIGINT, SIGTERM, SIGHUP);
}

// The streams' thread stops before the parts it uses go (it is declared before the writer, for the writer's
// last callbacks, so it would otherwise outlive the broker when a start-up fails after it started).
Server::~Server() {
  if (streams_) streams_->stop();
}

// The store first: a data directory that cannot be read stops the start-up (exit code 3).
void Server::open_store() {
  const StorageSettings& st = settings_.storage;
  if (!options_.data_dir_given && !st.data_dir.empty()) options_.data_dir = st.data_dir;
  std::string prefix = st.redis_prefix;
  // In a cluster on the redis store, each node keeps its durable rows in a section of its own, which
  // another node adopts once it is gone (docs/scale-out.md "Durable queues across nodes").
  cluster::ClusterConfig& cluster = settings_.cluster;
  if (cluster.enabled && st.backend == "redis") {
    if (cluster.node_id.empty()) cluster.node_id = auth::random_hex(8);
    if (cluster::valid_section(cluster.node_id) && !cluster.node_id.starts_with("move:")) {
      cluster.durable_homes = true;
      prefix += ":" + cluster.node_id;
    } else {
      spdlog::warn("cluster: node_id has spaces or control characters, or starts with move:; durable queues stay on "
                   "this node");
    }
  }
  backend_ = open_backend(st.backend, options_.data_dir, st.redis_url, prefix);
}

void Server::start_queues() {
  const StorageSettings& st = settings_.storage;
  auto contents = backend_->load();
  if (settings_.cluster.durable_homes) take_unsectioned(*backend_, contents, st.redis_url, st.redis_prefix);
  writer_ = std::make_unique<store::Writer>(
      *backend_, *store::parse_sync_mode(options_.sync), std::chrono::microseconds(options_.sync_window_us),
      [](std::chrono::nanoseconds took, size_t) { surfaces::http::process_metrics().store_write(took); });
  threads_ = options_.threads ? options_.threads : std::max(1u, std::thread::hardware_concurrency());
  pool_ = std::make_unique<net::WorkerPool>(threads_);
  sio_ = std::make_unique<net::SioServer>(*pool_);
  broker_ = std::make_unique<broker::Broker>();
  // In a cluster, the realms count what their subscriptions want from the other nodes (before the
  // durable subscriptions are restored below: they count too).
  if (settings_.cluster.enabled) broker_->track_interest(&interest_);
  broker::QueueOptions queue_options;
  queue_options.default_ttl_ms = st.default_ttl_ms;
  queue_options.max_queued_per_realm = st.max_queued_per_realm;
  // A queue's window of unacknowledged (or not yet sent) copies fits four times in the outbound bound.
  queue_options.window_bytes = std::max<size_t>(1, settings_.transport.max_outbound_bytes / 4);
  queue_options.max_queued_bytes_per_realm = st.max_queued_bytes_per_realm;
  queue_options.max_queued_bytes_total = st.max_queued_bytes_total;
  queue_options.new_message_id = [](uint64_t, int shard) { return surfaces::new_message_id(shard); };
  queue_options.observer = &surfaces::http::process_metrics();
  // The queues threads are fed by the I/O threads: one for every four keeps up with them (measured in
  // docs/performance.md "Scaling with cores").
  // At most 16: a stored copy's id names its shard in its last hex digit.
  queue_options.shards = options_.queue_threads ? options_.queue_threads : std::clamp(threads_ / 4, 1u, 16u);
  queues_ = std::make_unique<broker::DurableQueues>(*broker_, *writer_, queue_options);
  keys_ = std::make_unique<broker::KeyDirectory>(*writer_, settings_.key_directory);
  if (auto aside = keys_->load(contents.directory); !aside.empty()) writer_->submit(std::move(aside), nullptr);
  const nlohmann::json no_document;
  sse_history_ = std::make_unique<surfaces::http::SseHistory>(
      *writer_, surfaces::http::http_publish_options(settings_.document ? *settings_.document : no_document).history);
  if (auto past = sse_history_->load(contents.stream_messages); !past.empty()) writer_->submit(std::move(past), nullptr);
  surfaces::bus::BusLimits bus_limits;
  bus_options_ = std::make_unique<surfaces::bus::BusOptions>(
      surfaces::bus::bus_options(settings_.document ? *settings_.document : no_document, &bus_limits));
  broker::StreamsOptions stream_options;
  stream_options.max_streams_per_realm = bus_limits.max_streams_per_realm;
  stream_options.max_consumers_per_realm = bus_limits.max_consumers_per_realm;
  stream_options.max_bytes_per_realm = bus_limits.max_stream_bytes_per_realm;
  stream_options.max_bytes_total = bus_limits.max_stream_bytes_total;
  streams_ = std::make_unique<broker::Streams>(*broker_, *writer_, stream_options);
  if (auto unusable = streams_->load(contents); !unusable.empty()) writer_->submit(std::move(unusable), nullptr);
  surfaces::restore_subscriptions(*broker_, queues_->load(std::move(contents), surfaces::read_subscription));
  queues_->start();
  streams_->start();
}

void Server::register_surfaces() {
  auto move = [this](surfaces::StoreTarget target, std::function<void(const Status&)> done) {
    move_store(std::move(target), std::move(done));
  };
  tyo_mq_ = surfaces::register_tyo_mq(*sio_, *broker_, *queues_, *keys_, live_, {settings_.storage.default_ttl_ms, move});
  remote_ = remote::register_remote(*sio_, tyo_mq_.context, live_);
  surfaces::bus::BusOptions bus = std::move(*bus_options_);
  bus.server_id = net::random_id();
  bus.version = SIOMQ_VERSION;
  bus.slow_consumers = [this] { return engine_ ? engine_->slow_consumers() : 0; };
  surfaces::bus::register_bus(*sio_, tyo_mq_.context, *streams_, std::move(bus));
  // A removed realm's streams go with it (after what the other parts do).
  tyo_mq_.context->on_realm_removed = [this, before = std::move(tyo_mq_.context->on_realm_removed)](const std::string& realm) {
    if (before) before(realm);
    streams_->purge_realm(realm, nullptr);
  };
  if (settings_.diagnostics) surfaces::register_diagnostics(*sio_);
  if (settings_.console.enabled) {
    surfaces::console::ConsoleParts parts;
    parts.tyo = tyo_mq_.context;
    parts.streams = streams_.get();
    parts.version = SIOMQ_VERSION;
    parts.backend = backend_->name();
    parts.sync = options_.sync;
    parts.threads = threads_;
    parts.connections = [this] { return engine_ ? engine_->session_count() : 0; };
    parts.slow_consumers = [this] { return engine_ ? engine_->slow_consumers() : 0; };
    surfaces::console::register_console(*sio_, std::move(parts));
  }
}

void Server::join_cluster() {
  const cluster::ClusterConfig& config = settings_.cluster;
  if (!config.enabled) return;
  std::shared_ptr<surfaces::Context> ctx = tyo_mq_.context;
  cluster::Cluster::Handlers handlers;
  handlers.message = [ctx](const cluster::RelayedMessage& m) { surfaces::deliver_relayed(*ctx, m); };
  handlers.bus_message = [ctx](const cluster::BusRelayed& m) {
    if (ctx->bus_relayed) ctx->bus_relayed(m);
  };
  handlers.adopt_settings = [this](const std::string& text) {
    auto doc = nlohmann::json::parse(text, nullptr, false);
    if (auto s = doc.is_discarded() ? Status(make_error("not JSON", 400)) : live_.adopt(std::move(doc)); s)
      spdlog::info("cluster: adopted the cluster's settings");
    else
      spdlog::error("cluster: keeping this node's settings; the cluster's cannot be used: {}", s.error().message);
  };
  handlers.local_settings = [this] { return live_.document().dump(); };
  handlers.note_channels = {surfaces::kDecisionChannel, surfaces::kKeysChannel, cluster::kRealmRemovedChannel,
                            cluster::kPresenceChannel};
  if (config.durable_homes) {
    moves_ = std::make_unique<DurableMoves>(ctx, settings_.storage.redis_url, settings_.storage.redis_prefix);
    handlers.note_channels.push_back(cluster::kDurableChannel);
    handlers.adopt_section = [m = moves_.get()](const std::string& section) { m->adopt(section); };
  }
  handlers.note = [ctx, m = moves_.get()](const std::string& channel, const std::string& text) {
    if (channel == surfaces::kDecisionChannel) surfaces::on_decision_note(*ctx, text);
    if (channel == surfaces::kKeysChannel) surfaces::on_keys_note(*ctx, text);
    if (channel == cluster::kRealmRemovedChannel) surfaces::on_realm_removed_note(*ctx, text);
    if (channel == cluster::kPresenceChannel) surfaces::on_presence_note(*ctx, text);
    if (channel == cluster::kDurableChannel && m) m->on_note(text);
  };
  handlers.joined = [ctx, m = moves_.get()] {
    surfaces::copy_shared_keys(*ctx);
    if (m) m->reconcile();
  };
  handlers.name_lost = [ctx](const std::string& realm, const std::string& name) { surfaces::drop_lost_name(*ctx, realm, name); };
  // The largest message a client could hand this node whole (a joined PRODUCE_CHUNK), with the envelope;
  // binary attachments travel in base64 (4/3).
  const size_t max_relayed =
      std::max(settings_.transport.max_payload, surfaces::kMaxTransferBytesPerSocket) / 3 * 4 + 64 * 1024;
  cluster_ = std::make_shared<cluster::Cluster>(config, std::move(handlers), max_relayed, &interest_);
  cluster::Cluster* c = cluster_.get();
  ctx->cluster = cluster_;
  // What clients do here that clients on other nodes hear of (weakly: the broker outlives the cluster).
  broker_->share_presence([weak = std::weak_ptr<cluster::Cluster>(cluster_)](const std::string& realm,
                                                                             std::vector<broker::PeerPresence> changes) {
    if (auto link = weak.lock()) surfaces::share_presence(*link, realm, changes);
  });
  live_.on_changed([c](const nlohmann::json& doc) { c->publish_settings(doc.dump()); });
}

void Server::listen() {
  const net::TransportOptions& transport = settings_.transport;
  net::InboundBudget::set_limit(transport.max_inbound_bytes);
  engine_ = std::make_unique<net::EngineServer>(*pool_, transport,
                                                [this](net::EngineSession& s) { return sio_->make_connection(s); });
  // The HTTP API claims only its own paths (and only while http_api is enabled); the Engine.IO route its path.
  routes_.handlers.emplace_back(
      surfaces::http::http_api_route({tyo_mq_.context, *engine_, threads_, SIOMQ_VERSION}));
  routes_.handlers.emplace_back([this](const auto& conn, net::HttpRequest& req) { return engine_->handle(conn, req); });
  // HTTP publish (tyo-mq §9): /pub, /sub, /sub-ticket; 404 JSON while disabled.
  auto http_publish = surfaces::http::make_http_publish(
      tyo_mq_.context, surfaces::http::http_publish_options(settings_.document ? *settings_.document : nlohmann::json()),
      *sse_history_);
  routes_.handlers.emplace_back(std::move(http_publish.handle));
  routes_.payload_too_large_body.push_back(std::move(http_publish.too_large_body));
  http_publish_sweep_ = std::move(http_publish.sweep);
  routes_.on_payload_too_large = [this](std::string_view target) { engine_->payload_too_large(target); };
  // With TLS: the main port is TLS, or, with tls.port, plain beside a second port that is TLS.
  bool second_port = tls_ && tls_->options().port;
  listener_ = std::make_unique<net::Listener>(*pool_, routes_, transport, second_port ? nullptr : tls_.get());
  listener_->listen(options_.host, options_.port);
  if (second_port) {
    tls_listener_ = std::make_unique<net::Listener>(*pool_, routes_, transport, tls_.get());
    tls_listener_->listen(options_.host, *tls_->options().port);
  }
  if (settings_.console.enabled) listen_console();
}

// The console's port: its pages, then Engine.IO (sessions marked as the console's, for /console); nothing
// else (the HTTP API and HTTP publish stay on the main port). TLS whenever TLS is configured: the port
// carries admin tokens.
void Server::listen_console() {
  console_routes_.handlers.emplace_back(surfaces::console::serve_console_page);
  console_routes_.handlers.emplace_back(
      [this](const auto& conn, net::HttpRequest& req) {
        return surfaces::console::refuse_cross_origin(conn, req) || engine_->handle(conn, req, /*console=*/true);
      });
  console_routes_.on_payload_too_large = routes_.on_payload_too_large;
  const ConsoleSettings& c = settings_.console;
  console_listener_ = std::make_unique<net::Listener>(*pool_, console_routes_, settings_.transport, tls_.get());
  console_listener_->listen(c.host, c.port);
  if (!live_.current().auth.enabled)
    spdlog::warn("console: auth is off, so anyone who reaches the console's port may use it (docs/console.md)");
}

// A command line that cannot work is a start-up error like a bad settings file (exit code 1); the
// files themselves are TlsContext's to judge (exit code 4).
void Server::load_tls() {
  std::optional<net::TlsOptions> tls = settings_.tls;
  if (!options_.tls_cert.empty() || !options_.tls_key.empty()) {
    if (options_.tls_cert.empty() || options_.tls_key.empty())
      throw std::runtime_error("--tls-cert and --tls-key go together");
    if (!tls) tls.emplace();
    tls->cert = options_.tls_cert;
    tls->key = options_.tls_key;
  }
  if (options_.tls_port) {
    if (!tls) throw std::runtime_error("--tls-port needs a certificate and key (--tls-cert, --tls-key or the tls block)");
    tls->port = options_.tls_port;
  }
  if (tls) tls_ = std::make_unique<net::TlsContext>(std::move(*tls));
}

void Server::move_store(surfaces::StoreTarget target, std::function<void(const Status&)> done) {
  boost::asio::post(main_io_, [this, target = std::move(target), done = std::move(done)] {
    // Its section is what the other nodes adopt when it dies: the node's store stays there.
    if (settings_.cluster.durable_homes)
      return done(make_error("this node's durable queues live in its section of the cluster's redis store; "
                             "set_persistence is not available in a cluster on the redis store", 409));
    try {
      next_backend_ = open_backend(target.backend, target.path.empty() ? options_.data_dir : target.path, target.url,
                                   target.prefix);
      auto held = next_backend_->load();
      if (!held.empty()) {
        next_backend_.reset();
        return done(make_error("the target store is not empty", 409));
      }
    } catch (const std::exception& e) {
      next_backend_.reset();
      return done(make_error(std::string("cannot open the store: ") + e.what(), 500));
    }
    // The queues' records, then the directory's, then the SSE history's, each part holding its lock
    // until the writer has switched.
    auto directory = [this](std::vector<store::Op> ops, const std::function<void(std::vector<store::Op>)>& commit) {
      keys_->move_along(std::move(ops), [this, &commit](std::vector<store::Op> all) {
        sse_history_->move_along(std::move(all), [this, &commit](std::vector<store::Op> with_history) {
          streams_->move_along(std::move(with_history), commit);
        });
      });
    };
    queues_->move_store(*next_backend_, [this, done](const Status& s) {
      boost::asio::post(main_io_, [this, s, done] {
        if (s) backend_ = std::move(next_backend_);  // the old one closes here
        else next_backend_.reset();
        done(s);
      });
    }, directory);
  });
}

void Server::start() {
  if (cluster_ && !cluster_->start(std::chrono::seconds(3)))
    spdlog::warn("cluster: starting with this node's own settings; the cluster's are adopted once redis answers");
  pool_->start();
  engine_->start();
  listener_->start();
  if (tls_listener_) tls_listener_->start();
  const StorageSettings& st = settings_.storage;
  std::string tls = !tls_ ? "" : tls_listener_ ? ", TLS on port " + std::to_string(tls_listener_->port()) : ", TLS";
  spdlog::info("siomq-server {} listening on {}:{} ({} threads, store {}{}, sync {}{})", SIOMQ_VERSION, options_.host,
               listener_->port(), threads_, backend_->name(), st.backend == "file" ? " in " + options_.data_dir : "",
               options_.sync, tls);
  // After the line above, which tests and scripts wait for.
  if (console_listener_) {
    console_listener_->start();
    const std::string& host = settings_.console.host;
    spdlog::info("console listening on {}:{} ({}://{}:{}/console/)", host, console_listener_->port(), tls_ ? "https" : "http",
                 host, console_listener_->port());
  }
}

int Server::run() {
  // Realms that expired while the server was down are disposed of before the first client is accepted.
  tyo_mq_.housekeeping();
  start();
  tick_.expires_after(std::chrono::seconds(1));
  tick_.async_wait([this](const boost::system::error_code& ec) { on_tick(ec); });
  signals_->async_wait([this](const boost::system::error_code& ec, int sig) { on_signal(ec, sig); });
  main_io_.run();
  stop();
  return 0;
}

void Server::on_signal(const boost::system::error_code& ec, int sig) {
  if (ec) return;
  if (sig == SIGHUP) {
    if (tls_) {
      if (std::string why = tls_->reload(); !why.empty())
        spdlog::error("SIGHUP: keeping the current TLS certificate: {}", why);
    }
    if (options_.settings_file.empty()) {
      spdlog::info("SIGHUP: no settings file to reload");
    } else if (auto s = live_.reload(); s) {
      spdlog::info("SIGHUP: settings reloaded from {} (transport and storage settings apply at the next start)",
                   options_.settings_file);
    } else {
      spdlog::error("SIGHUP: keeping the last good settings: {}", s.error().message);
    }
    signals_->async_wait([this](const boost::system::error_code& e, int s) { on_signal(e, s); });
    return;
  }
  spdlog::info("{}: shutting down", sig == SIGTERM ? "SIGTERM" : "SIGINT");
  main_io_.stop();
}

// Once a second: a changed settings file is re-read, and the surface does its housekeeping.
void Server::on_tick(const boost::system::error_code& ec) {
  if (ec) return;
  if (auto changed = live_.reload_if_changed()) {
    if (*changed) spdlog::info("settings file {} changed: reloaded", options_.settings_file);
    else spdlog::error("settings file changed but keeping the last good settings: {}", changed->error().message);
  }
  tyo_mq_.housekeeping();
  remote_.housekeeping();
  if (http_publish_sweep_) http_publish_sweep_();
  tick_.expires_after(std::chrono::seconds(1));
  tick_.async_wait([this](const boost::system::error_code& e) { on_tick(e); });
}

// Graceful shutdown: stop accepting, close every session (queued frames are flushed first), give the
// writes a moment, then stop the workers. A watchdog guarantees the exit within 5 s.
void Server::stop() {
  // The step under way, for the watchdog's line: a shutdown that hangs says where.
  static std::atomic<const char*> step{"listeners"};
  std::thread([] {
    std::this_thread::sleep_for(std::chrono::milliseconds(4500));
    spdlog::warn("shutdown took too long (stuck at: {}); exiting", step.load());
    std::_Exit(0);
  }).detach();
  listener_->stop();
  if (tls_listener_) tls_listener_->stop();
  if (console_listener_) console_listener_->stop();
  step = "cluster";
  if (cluster_) cluster_->stop();  // no more relayed deliveries into sessions that are closing
  if (moves_) moves_->stop();
  step = "sessions";
  engine_->close_all("server shutting down");
  for (int i = 0; i < 20 && engine_->session_count() > 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(25));
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  step = "workers";
  pool_->stop();
  // Whatever was submitted to the store is written before the process ends.
  step = "durable queues";
  queues_->stop();
  step = "streams";
  streams_->stop();
  step = "store writer";
  writer_->stop();
  spdlog::info("stopped");
}

}  // namespace siomq::server
