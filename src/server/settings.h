// The server's settings: the tyo-mq JSON settings file (unknown keys are logged and ignored) plus the
// command line. Parsing is strict about types: a wrong type is a start-up error, not a silent default.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "broker/key_directory_limits.h"
#include "cluster/cluster_config.h"
#include "net/tls_options.h"
#include "net/transport_options.h"

namespace siomq::server {

// Where durable messages are kept (tyo-mq's `storage`, `storage_options`, `default_ttl`, and
// `max_queued_per_realm` at the top level or in `limits`).
struct StorageSettings {
  std::string backend = "file";  // memory, file (RocksDB; "sqlite" is read as file) or redis
  std::string redis_url = "redis://127.0.0.1:6379";
  std::string redis_prefix = "siomq";
  std::optional<int64_t> default_ttl_ms = 86400 * 1000LL;  // nullopt: stored copies never expire
  size_t max_queued_per_realm = 0;                          // 0: unlimited
  // Bytes of stored copies (payload, attachments and 256 per row: they are held in memory too), per realm
  // and for the server; beyond them copies are dropped like beyond max_queued_per_realm. 0: unlimited.
  size_t max_queued_bytes_per_realm = size_t{1} << 30;
  size_t max_queued_bytes_total = size_t{4} << 30;
  std::string data_dir;  // storage_options.path (or filename): the file store's directory; "" : --data-dir
};

// The web console (docs/console.md): served on a port of its own, off unless enabled.
struct ConsoleSettings {
  bool enabled = false;
  uint16_t port = 17353;  // 0 picks a free one
  // Loopback unless set: a console is for the operators, who reach it through a tunnel or set the host.
  std::string host = "127.0.0.1";
};

struct Settings {
  net::TransportOptions transport;
  StorageSettings storage;
  broker::KeyDirectoryLimits key_directory;  // limits.max_directory_entries_per_realm, limits.max_directory_bytes
  bool diagnostics = false;
  std::optional<net::TlsOptions> tls;  // the `tls` block: TLS terminated by the server
  cluster::ClusterConfig cluster;      // the `cluster` block (§10)
  ConsoleSettings console;             // the `console` block
  std::shared_ptr<const nlohmann::json> document;  // the whole file, for the surfaces that read it
};

// Reads and validates a settings file; throws std::runtime_error with the reason on failure.
Settings load_settings_file(const std::string& path);
// Builds settings from a parsed document (the file's contents); throws on invalid values.
Settings settings_from_json(const nlohmann::json& doc);
// Applies environment overrides (TYO_MQ_MAX_HTTP_BUFFER_SIZE).
void apply_environment(Settings& settings);

}  // namespace siomq::server
