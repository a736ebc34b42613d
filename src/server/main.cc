// siomq-server: the broker process. Reads the command line, then runs the server (server/server.h),
// which handles signals (TERM/INT: graceful shutdown; HUP: reload settings and the TLS certificate).
#include <CLI/CLI.hpp>
#include <spdlog/spdlog.h>

#include <malloc.h>

#include <csignal>
#include <cstdlib>
#include <exception>
#include <string>

#include "net/tls_context.h"
#include "server/server.h"
#include "store/store.h"

using namespace siomq;

namespace {

// glibc's malloc, set for a server whose messages are allocated on one thread and freed on another
// (an io worker parses a publish, the streams or queues thread frees it; that thread encodes an answer,
// the worker frees it). By default an arena whose top grows free past 128 KiB is trimmed at once and
// regrown by the next burst (mprotect, then a page fault per page touched), and allocations from 128
// KiB up are each an mmap. A stream publish profile on one core spent ~10% there. Kept instead: up to
// 32 MiB free at the top of an arena, grown 8 MiB at a time (address space: pages cost memory only once
// touched), mmap from 4 MiB. Measured on one core: stream.pub acked 150k -> 160-166k/s, durable
// acked +4%, core pub/sub unchanged.
// Built with tcmalloc (SIOMQ_MALLOC, the default) there is nothing to set: its per-thread caches and central
// free lists suit that pattern as they are; this is for `-DSIOMQ_MALLOC=system` and sanitized builds.
void tune_malloc() {
#ifndef SIOMQ_TCMALLOC
  mallopt(M_TRIM_THRESHOLD, 32 << 20);
  mallopt(M_TOP_PAD, 8 << 20);
  mallopt(M_MMAP_THRESHOLD, 4 << 20);
#endif
}

}  // namespace

int main(int argc, char** argv) {
  tune_malloc();
  std::signal(SIGPIPE, SIG_IGN);
  CLI::App app{"siomq-server: a Socket.IO message broker, a drop-in tyo-mq server"};
  server::ServerOptions opt;
  std::string log_level = "info";
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
  app.add_option("--queue-threads", opt.queue_threads,
                 "Durable queues threads, each owning a share of the queues (default: one per four I/O threads)")
      ->check(CLI::Range(0u, 16u));
  app.add_option("--log-level", log_level, "trace, debug, info, warn, error, critical or off")
      ->capture_default_str()
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error", "critical", "off"}));
  app.add_option("--tls-cert", opt.tls_cert, "TLS certificate (PEM); with --tls-key, serves https and wss");
  app.add_option("--tls-key", opt.tls_key, "TLS private key (PEM) of --tls-cert");
  app.add_option("--tls-port", opt.tls_port, "Serve TLS on this second port and keep --port plain");
  app.add_flag("--diagnostics", opt.diagnostics, "Serve the /diagnostics namespace (transport self-tests)");
  app.add_flag("--console", opt.console, "Serve the web console on its own port (console.port, default 17353)");
  app.add_option("--console-port", opt.console_port, "The web console's port (implies --console); 0 picks a free one");
  app.set_version_flag("--version", std::string("siomq-server ") + SIOMQ_VERSION);
  CLI11_PARSE(app, argc, argv);
  opt.data_dir_given = data_dir->count() > 0;

  spdlog::set_level(spdlog::level::from_str(log_level));
  spdlog::set_pattern("%Y-%m-%dT%H:%M:%S.%e %^%l%$ %v");
  try {
    server::Server server(std::move(opt));
    return server.run();
  } catch (const net::TlsError& e) {
    spdlog::critical("cannot start: {}", e.what());
    return net::kTlsExitCode;
  } catch (const store::StoreError& e) {
    spdlog::critical("cannot open the store: {}", e.what());
    return store::kStoreExitCode;
  } catch (const std::exception& e) {
    spdlog::critical("cannot start: {}", e.what());
    return 1;
  }
}
