// siomq-server: the broker process. Parses the command line and settings, starts the workers and the
// listener, and handles signals (TERM/INT: graceful shutdown; HUP: reload settings).
#include <CLI/CLI.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <spdlog/spdlog.h>

#include <csignal>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <thread>

#include "auth/live_settings.h"
#include "broker/broker.h"
#include "broker/durable_queues.h"
#include "net/engine_server.h"
#include "net/inbound_budget.h"
#include "net/listener.h"
#include "net/sio_server.h"
#include "net/worker_pool.h"
#include "server/settings.h"
#include "store/store.h"
#include "store/writer.h"
#include "surfaces/diagnostics.h"
#include "surfaces/tyo_mq/surface.h"

namespace {

using namespace siomq;

struct Options {
  std::string host = "0.0.0.0";
  uint16_t port = 17352;
  std::string settings_file;
  std::string data_dir = "./data";
  bool data_dir_given = false;  // --data-dir on the command line wins over storage_options.path
  std::string storage;  // overrides the settings' `storage`
  std::string sync = "batch";
  unsigned sync_window_us = 2000;
  unsigned threads = 0;
  std::string log_level = "info";
  bool diagnostics = false;
};

// Opens the store that `backend` names; throws store::StoreError.
std::unique_ptr<store::Backend> open_store(const std::string& backend, const std::string& data_dir, const std::string& url,
                                           const std::string& prefix) {
  if (backend == "memory") return store::open_memory();
  if (backend == "redis") return store::open_redis(url, prefix);
  return store::open_file(data_dir);
}

int run(Options opt) {
  server::Settings settings;
  if (!opt.settings_file.empty()) settings = server::load_settings_file(opt.settings_file);
  server::apply_environment(settings);
  if (opt.diagnostics) settings.diagnostics = true;

  if (!opt.storage.empty()) settings.storage.backend = opt.storage == "sqlite" ? "file" : opt.storage;
  // Auth, limits and idle eviction are read live from here on; management commands write it back.
  auth::LiveSettings live(settings.document ? *settings.document : nlohmann::json::object(), opt.settings_file,
                          [](const nlohmann::json& doc) { server::settings_from_json(doc); });
  if (auto line = live.bootstrap_admin_token(); !line.empty()) spdlog::info("{}", line);

  // The store first: a data directory that cannot be read stops the start-up (exit code 3).
  const server::StorageSettings& st = settings.storage;
  if (!opt.data_dir_given && !st.data_dir.empty()) opt.data_dir = st.data_dir;
  std::unique_ptr<store::Backend> backend = open_store(st.backend, opt.data_dir, st.redis_url, st.redis_prefix);
  std::unique_ptr<store::Backend> next_backend;  // during a set_persistence move; outlives the writer
  auto contents = backend->load();
  store::Writer writer(*backend, *store::parse_sync_mode(opt.sync), std::chrono::microseconds(opt.sync_window_us));

  unsigned threads = opt.threads ? opt.threads : std::max(1u, std::thread::hardware_concurrency());
  net::WorkerPool pool(threads);
  net::SioServer sio(pool);
  broker::Broker broker;
  auto sink = surfaces::make_tyo_mq_sink();
  broker::QueueOptions queue_options;
  queue_options.default_ttl_ms = st.default_ttl_ms;
  queue_options.max_queued_per_realm = st.max_queued_per_realm;
  // A queue's window of unacknowledged (or not yet sent) copies fits four times in the outbound bound.
  queue_options.window_bytes = std::max<size_t>(1, settings.transport.max_outbound_bytes / 4);
  queue_options.max_queued_bytes_per_realm = st.max_queued_bytes_per_realm;
  queue_options.max_queued_bytes_total = st.max_queued_bytes_total;
  broker::DurableQueues queues(broker, writer, *sink, queue_options);
  for (const auto& restored : queues.load(std::move(contents)))
    broker.with_realm(restored.first, [&](broker::Realm& r) { r.restore(restored.second); });
  queues.start();
  // Runs set_persistence's move: the target is opened and checked on the main thread (it may block), the
  // queues copy everything into it, and the old backend is closed once the writer has switched.
  boost::asio::io_context signals_io;
  surfaces::MoveStore move_store = [&](surfaces::StoreTarget target, std::function<void(const Status&)> done) {
    boost::asio::post(signals_io, [&, target = std::move(target), done = std::move(done)] {
      try {
        next_backend = open_store(target.backend, target.path.empty() ? opt.data_dir : target.path, target.url, target.prefix);
        auto held = next_backend->load();
        if (!held.rows.empty() || !held.dead.empty() || !held.subscriptions.empty()) {
          next_backend.reset();
          return done(make_error("the target store is not empty", 409));
        }
      } catch (const std::exception& e) {
        next_backend.reset();
        return done(make_error(std::string("cannot open the store: ") + e.what(), 500));
      }
      queues.move_store(*next_backend, [&, done](const Status& s) {
        boost::asio::post(signals_io, [&, s, done] {
          if (s) backend = std::move(next_backend);  // the old one closes here
          else next_backend.reset();
          done(s);
        });
      });
    });
  };
  auto housekeeping = surfaces::register_tyo_mq(sio, broker, queues, live, {st.default_ttl_ms, move_store});
  if (settings.diagnostics) surfaces::register_diagnostics(sio);

  const net::TransportOptions& transport = settings.transport;
  net::InboundBudget::set_limit(transport.max_inbound_bytes);
  net::EngineServer engine(pool, transport, [&sio](net::EngineSession& s) { return sio.make_connection(s); });
  net::HttpRoutes routes;
  routes.handlers.emplace_back([&engine](const auto& conn, net::HttpRequest& req) { return engine.handle(conn, req); });
  routes.on_payload_too_large = [&engine](std::string_view target) { engine.payload_too_large(target); };

  net::Listener listener(pool, routes, transport);
  listener.listen(opt.host, opt.port);

  // Signals are caught from here on: a TERM or HUP right after the "listening" line is handled, not fatal.
  boost::asio::signal_set signals(signals_io, SIGINT, SIGTERM, SIGHUP);

  pool.start();
  engine.start();
  listener.start();
  spdlog::info("siomq-server {} listening on {}:{} ({} threads, store {}{}, sync {})", SIOMQ_VERSION, opt.host,
               listener.port(), threads, backend->name(), st.backend == "file" ? " in " + opt.data_dir : "",
               opt.sync);

  std::function<void(const boost::system::error_code&, int)> on_signal =
      [&](const boost::system::error_code& ec, int sig) {
        if (ec) return;
        if (sig == SIGHUP) {
          if (opt.settings_file.empty()) {
            spdlog::info("SIGHUP: no settings file to reload");
          } else if (auto s = live.reload(); s) {
            spdlog::info("SIGHUP: settings reloaded from {} (transport and storage settings apply at the next start)",
                         opt.settings_file);
          } else {
            spdlog::error("SIGHUP: keeping the last good settings: {}", s.error().message);
          }
          signals.async_wait(on_signal);
          return;
        }
        spdlog::info("{}: shutting down", sig == SIGTERM ? "SIGTERM" : "SIGINT");
        signals_io.stop();
      };
  // Once a second: a changed settings file is re-read, and the surface does its housekeeping.
  boost::asio::steady_timer tick(signals_io);
  std::function<void(const boost::system::error_code&)> on_tick = [&](const boost::system::error_code& ec) {
    if (ec) return;
    if (auto changed = live.reload_if_changed()) {
      if (*changed) spdlog::info("settings file {} changed: reloaded", opt.settings_file);
      else spdlog::error("settings file changed but keeping the last good settings: {}", changed->error().message);
    }
    housekeeping();
    tick.expires_after(std::chrono::seconds(1));
    tick.async_wait(on_tick);
  };
  housekeeping();
  tick.expires_after(std::chrono::seconds(1));
  tick.async_wait(on_tick);
  signals.async_wait(on_signal);
  signals_io.run();

  // Graceful shutdown: stop accepting, close every session (queued frames are flushed first), give
  // the writes a moment, then stop the workers. A watchdog guarantees the exit within 5 s.
  std::thread([] {
    std::this_thread::sleep_for(std::chrono::milliseconds(4500));
    spdlog::warn("shutdown took too long; exiting");
    std::_Exit(0);
  }).detach();
  listener.stop();
  engine.close_all("server shutting down");
  for (int i = 0; i < 20 && engine.session_count() > 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(25));
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  pool.stop();
  // Whatever was submitted to the store is written before the process ends.
  queues.stop();
  writer.stop();
  spdlog::info("stopped");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::signal(SIGPIPE, SIG_IGN);
  CLI::App app{"siomq-server: a Socket.IO message broker, a drop-in tyo-mq server"};
  Options opt;
  if (const char* p = std::getenv("PORT")) opt.port = static_cast<uint16_t>(std::atoi(p));
  if (const char* s = std::getenv("TYO_MQ_SETTINGS_FILE")) opt.settings_file = s;
  app.add_option("--host", opt.host, "Address to listen on")->capture_default_str();
  app.add_option("--port", opt.port, "TCP port (env PORT); 0 picks a free one")->capture_default_str();
  app.add_option("--settings", opt.settings_file, "Settings JSON file (env TYO_MQ_SETTINGS_FILE)");
  auto* data_dir = app.add_option("--data-dir", opt.data_dir, "Directory of the embedded store (else storage_options.path)")
                       ->capture_default_str();
  app.add_option("--storage", opt.storage, "memory, file (RocksDB) or redis; overrides the settings' storage")
      ->check(CLI::IsMember({"memory", "file", "sqlite", "redis"}));
  app.add_option("--sync", opt.sync, "always, batch (group commit) or never")
      ->capture_default_str()
      ->check(CLI::IsMember({"always", "batch", "never"}));
  app.add_option("--sync-window-us", opt.sync_window_us, "How long a batch waits for more writes, in microseconds")
      ->capture_default_str();
  app.add_option("--threads", opt.threads, "I/O threads (default: one per core)");
  app.add_option("--log-level", opt.log_level, "trace, debug, info, warn, error, critical or off")
      ->capture_default_str()
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error", "critical", "off"}));
  app.add_flag("--diagnostics", opt.diagnostics, "Serve the /diagnostics namespace (transport self-tests)");
  app.set_version_flag("--version", std::string("siomq-server ") + SIOMQ_VERSION);
  CLI11_PARSE(app, argc, argv);
  opt.data_dir_given = data_dir->count() > 0;

  spdlog::set_level(spdlog::level::from_str(opt.log_level));
  spdlog::set_pattern("%Y-%m-%dT%H:%M:%S.%e %^%l%$ %v");
  try {
    return run(opt);
  } catch (const store::StoreError& e) {
    spdlog::critical("cannot open the store: {}", e.what());
    return store::kStoreExitCode;
  } catch (const std::exception& e) {
    spdlog::critical("cannot start: {}", e.what());
    return 1;
  }
}
