#include "server/settings.h"

#include <spdlog/spdlog.h>

#include <array>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>

#include "surfaces/remote/relay_settings.h"
#include "wire/durations.h"

namespace siomq::server {
namespace {

using nlohmann::json;

// Every top-level key of the tyo-mq settings format, plus this server's own blocks.
constexpr std::array kKnownKeys = {
    "auth", "limits", "idle_eviction", "http_api", "httpApi", "http_publish", "storage", "storage_options", "default_ttl",
    "cluster", "namespaces", "remote", "max_queued_per_realm", "e2ee", "sealed", "push", "trust_proxy",
    // siomq's own:
    "transport", "diagnostics", "tls", "bus", "console",
    // read by auth::LiveSettings (auth/auth_store.h):
    "auth_store"};

constexpr std::array kTransportKeys = {"path",          "ping_interval",   "ping_timeout",      "upgrade_timeout",
                                       "connect_timeout", "http_request_timeout", "max_payload", "max_outbound_bytes",
                                       "max_http_header", "allow_eio3",      "max_connections",   "max_inbound_bytes"};

template <size_t N>
bool known(const std::array<const char*, N>& keys, const std::string& k) {
  for (const char* key : keys) {
    if (k == key) return true;
  }
  return false;
}

std::chrono::milliseconds read_ms(const json& block, const char* key, std::chrono::milliseconds fallback) {
  if (!block.contains(key)) return fallback;
  const auto& v = block.at(key);
  if (!v.is_number_integer() || v.get<int64_t>() <= 0)
    throw std::runtime_error(std::string("transport.") + key + " must be a positive integer (milliseconds)");
  return std::chrono::milliseconds(v.get<int64_t>());
}

size_t read_size(const json& block, const char* key, size_t fallback) {
  if (!block.contains(key)) return fallback;
  const auto& v = block.at(key);
  if (!v.is_number_integer() || v.get<int64_t>() <= 0)
    throw std::runtime_error(std::string("transport.") + key + " must be a positive integer (bytes)");
  return static_cast<size_t>(v.get<int64_t>());
}

// A TTL in seconds or a duration string (§5.5, §0 row 7); a negative number means "never".
std::optional<int64_t> read_ttl(const json& v, const std::string& where) {
  auto ttl = durations::parse_ttl(v.dump());
  if (!(v.is_number() || v.is_string()) || (v.is_string() && ttl.kind == durations::Ttl::Kind::never))
    throw std::runtime_error(where + " must be a number of seconds or a duration such as \"12h\"");
  if (ttl.kind == durations::Ttl::Kind::ms) return ttl.ms;
  return std::nullopt;
}

size_t read_count(const json& v, const std::string& where) {
  if (!v.is_number()) throw std::runtime_error(where + " must be a number");
  double n = v.get<double>();
  return n > 0 ? static_cast<size_t>(n) : 0;  // 0 or negative: unlimited, as tyo-mq reads it
}

StorageSettings read_storage(const json& doc) {
  StorageSettings st;
  if (doc.contains("storage")) {
    const auto& v = doc.at("storage");
    if (!v.is_string()) throw std::runtime_error("storage must be a string: memory, file or redis");
    st.backend = v.get<std::string>();
    if (st.backend == "sqlite") {
      spdlog::info("settings: storage \"sqlite\" is served by the embedded file store (RocksDB)");
      st.backend = "file";
    }
    if (st.backend != "memory" && st.backend != "file" && st.backend != "redis")
      throw std::runtime_error("storage must be memory, file (or sqlite) or redis, not \"" + st.backend + "\"");
  }
  if (doc.contains("default_ttl")) st.default_ttl_ms = read_ttl(doc.at("default_ttl"), "default_ttl");
  if (doc.contains("storage_options")) {
    const auto& o = doc.at("storage_options");
    if (!o.is_object()) throw std::runtime_error("storage_options must be an object");
    if (o.contains("default_ttl")) st.default_ttl_ms = read_ttl(o.at("default_ttl"), "storage_options.default_ttl");
    for (const char* key : {"url", "prefix", "path", "filename"}) {
      if (o.contains(key) && !o.at(key).is_string())
        throw std::runtime_error(std::string("storage_options.") + key + " must be a string");
    }
    if (o.contains("url")) st.redis_url = o.at("url").get<std::string>();
    if (o.contains("prefix")) st.redis_prefix = o.at("prefix").get<std::string>();
    if (o.contains("filename")) st.data_dir = o.at("filename").get<std::string>();
    if (o.contains("path")) st.data_dir = o.at("path").get<std::string>();
  }
  if (doc.contains("max_queued_per_realm"))
    st.max_queued_per_realm = read_count(doc.at("max_queued_per_realm"), "max_queued_per_realm");
  if (doc.contains("limits") && doc.at("limits").is_object()) {
    const auto& l = doc.at("limits");
    bool enabled = !(l.contains("enabled") && l.at("enabled") == false);
    if (enabled && l.contains("max_queued_per_realm"))
      st.max_queued_per_realm = read_count(l.at("max_queued_per_realm"), "limits.max_queued_per_realm");
    // Memory bounds, not tyo-mq's: they apply with the block switched off too.
    if (l.contains("max_queued_bytes_per_realm"))
      st.max_queued_bytes_per_realm = read_count(l.at("max_queued_bytes_per_realm"), "limits.max_queued_bytes_per_realm");
    if (l.contains("max_queued_bytes_total"))
      st.max_queued_bytes_total = read_count(l.at("max_queued_bytes_total"), "limits.max_queued_bytes_total");
  }
  return st;
}

// `remote` and `namespaces` (surfaces/remote/relay_settings.h) are read live by the relay namespaces;
// a broken block refuses the whole version here, so the last good one stays. Configured names that are
// built in are logged and ignored.
void check_relay_settings(const json& doc) {
  auto relay = remote::parse_relay_settings(doc);
  for (const auto& name : relay.ignored)
    spdlog::warn("settings: namespaces.{} ignored: {} is built in and cannot be configured", name, name);
}

// The key directory's memory bounds (E2EE directories): in `limits`, applying with the block switched off
// too, like the other memory bounds. 0 or a negative number keeps the default (they cannot be lifted).
broker::KeyDirectoryLimits read_key_directory(const json& doc) {
  broker::KeyDirectoryLimits k;
  if (!doc.contains("limits") || !doc.at("limits").is_object()) return k;
  const auto& l = doc.at("limits");
  if (l.contains("max_directory_entries_per_realm")) {
    if (size_t n = read_count(l.at("max_directory_entries_per_realm"), "limits.max_directory_entries_per_realm"))
      k.max_entries_per_realm = n;
  }
  if (l.contains("max_directory_bytes")) {
    if (size_t n = read_count(l.at("max_directory_bytes"), "limits.max_directory_bytes")) k.max_bytes = n;
  }
  return k;
}

// The `console` block: {enabled, port, host}, strictly (an unknown key is an error: a misspelt `enabled`
// must not leave an operator looking for a console that is not there, nor `host` open one too widely).
ConsoleSettings read_console(const json& c) {
  if (!c.is_object()) throw std::runtime_error("console must be an object: {enabled, [port], [host]}");
  ConsoleSettings out;
  for (const auto& [k, v] : c.items()) {
    if (k == "enabled") {
      if (!v.is_boolean()) throw std::runtime_error("console.enabled must be a boolean");
      out.enabled = v.get<bool>();
    } else if (k == "port") {
      if (!v.is_number_integer() || v.get<int64_t>() < 0 || v.get<int64_t>() > 65535)
        throw std::runtime_error("console.port must be an integer from 0 to 65535 (0 picks a free one)");
      out.port = static_cast<uint16_t>(v.get<int64_t>());
    } else if (k == "host") {
      if (!v.is_string() || v.get<std::string>().empty()) throw std::runtime_error("console.host must be a non-empty string");
      out.host = v.get<std::string>();
    } else {
      throw std::runtime_error("console: unknown key '" + k + "' (enabled, port, host)");
    }
  }
  return out;
}

// The `tls` block: types only (the files are read when the server starts: net/tls_context.h).
net::TlsOptions read_tls(const json& t) {
  if (!t.is_object()) throw std::runtime_error("tls must be an object: {cert, key, [ca], [min_version], [port]}");
  for (const auto& [k, v] : t.items()) {
    if (k != "cert" && k != "key" && k != "ca" && k != "min_version" && k != "port")
      spdlog::warn("settings: unknown key 'tls.{}' ignored", k);
  }
  net::TlsOptions o;
  for (const char* key : {"cert", "key", "ca", "min_version"}) {
    if (t.contains(key) && (!t.at(key).is_string() || t.at(key).get<std::string>().empty()))
      throw std::runtime_error(std::string("tls.") + key + " must be a non-empty string");
  }
  if (!t.contains("cert") || !t.contains("key")) throw std::runtime_error("tls needs both cert and key (PEM file paths)");
  o.cert = t.at("cert").get<std::string>();
  o.key = t.at("key").get<std::string>();
  if (t.contains("ca")) o.ca = t.at("ca").get<std::string>();
  if (t.contains("min_version")) {
    o.min_version = t.at("min_version").get<std::string>();
    if (o.min_version != "1.2" && o.min_version != "1.3")
      throw std::runtime_error("tls.min_version must be \"1.2\" or \"1.3\" (older versions are never accepted)");
  }
  if (t.contains("port")) {
    const auto& p = t.at("port");
    if (!p.is_number_integer() || p.get<int64_t>() < 0 || p.get<int64_t>() > 65535)
      throw std::runtime_error("tls.port must be an integer from 0 to 65535 (0 picks a free one)");
    o.port = static_cast<uint16_t>(p.get<int64_t>());
  }
  return o;
}

// The `cluster` block (§10), with the reference's camelCase aliases. A cluster needs a Redis URL: its own
// or the redis store's (storage_options.url, even when the store is another backend).
cluster::ClusterConfig read_cluster(const json& doc, const StorageSettings& storage) {
  cluster::ClusterConfig c;
  c.redis_url = storage.redis_url;
  if (!doc.contains("cluster")) return c;
  const auto& b = doc.at("cluster");
  if (!b.is_object()) throw std::runtime_error("cluster must be an object");
  auto text = [&](std::initializer_list<const char*> names, std::string& out) {
    for (const char* n : names) {
      if (!b.contains(n)) continue;
      if (!b.at(n).is_string() || b.at(n).get<std::string>().empty())
        throw std::runtime_error(std::string("cluster.") + n + " must be a non-empty string");
      out = b.at(n).get<std::string>();
      return;
    }
  };
  if (b.contains("enabled")) {
    if (!b.at("enabled").is_boolean()) throw std::runtime_error("cluster.enabled must be a boolean");
    c.enabled = b.at("enabled").get<bool>();
  }
  text({"redis_url", "redisUrl", "url"}, c.redis_url);
  text({"prefix", "channel_prefix", "channelPrefix"}, c.prefix);
  text({"node_id", "nodeId"}, c.node_id);
  if (c.node_id.size() > 128) throw std::runtime_error("cluster.node_id must be at most 128 characters");
  text({"reference_relay"}, c.reference_relay);
  if (c.reference_relay != "auto" && c.reference_relay != "always" && c.reference_relay != "never")
    throw std::runtime_error("cluster.reference_relay must be \"auto\", \"always\" or \"never\"");
  if (b.contains("node_lease_ms")) {
    const auto& v = b.at("node_lease_ms");
    if (!v.is_number_integer() || v.get<int64_t>() < 1000 || v.get<int64_t>() > 600'000)
      throw std::runtime_error("cluster.node_lease_ms must be an integer from 1000 to 600000");
    c.node_lease_ms = v.get<int64_t>();
  }
  return c;
}

}  // namespace

Settings settings_from_json(const json& doc) {
  if (!doc.is_object()) throw std::runtime_error("settings must be a JSON object");
  Settings s;
  for (const auto& [k, v] : doc.items()) {
    if (!known(kKnownKeys, k)) spdlog::warn("settings: unknown key '{}' ignored", k);
  }
  if (doc.contains("transport")) {
    const auto& t = doc.at("transport");
    if (!t.is_object()) throw std::runtime_error("transport must be an object");
    for (const auto& [k, v] : t.items()) {
      if (!known(kTransportKeys, k)) spdlog::warn("settings: unknown key 'transport.{}' ignored", k);
    }
    auto& o = s.transport;
    if (t.contains("path")) {
      if (!t.at("path").is_string()) throw std::runtime_error("transport.path must be a string");
      o.path = t.at("path").get<std::string>();
      if (o.path.empty() || o.path.front() != '/') throw std::runtime_error("transport.path must start with '/'");
      if (o.path.back() != '/') o.path.push_back('/');
    }
    o.ping_interval = read_ms(t, "ping_interval", o.ping_interval);
    o.ping_timeout = read_ms(t, "ping_timeout", o.ping_timeout);
    o.upgrade_timeout = read_ms(t, "upgrade_timeout", o.upgrade_timeout);
    o.connect_timeout = read_ms(t, "connect_timeout", o.connect_timeout);
    o.http_request_timeout = read_ms(t, "http_request_timeout", o.http_request_timeout);
    o.max_payload = read_size(t, "max_payload", o.max_payload);
    o.max_outbound_bytes = read_size(t, "max_outbound_bytes", o.max_outbound_bytes);
    o.max_http_header = read_size(t, "max_http_header", o.max_http_header);
    o.max_connections = read_size(t, "max_connections", o.max_connections);
    o.max_inbound_bytes = read_size(t, "max_inbound_bytes", o.max_inbound_bytes);
    if (t.contains("allow_eio3")) {
      if (!t.at("allow_eio3").is_boolean()) throw std::runtime_error("transport.allow_eio3 must be a boolean");
      o.allow_eio3 = t.at("allow_eio3").get<bool>();
    }
  }
  if (doc.contains("diagnostics")) {
    if (!doc.at("diagnostics").is_boolean()) throw std::runtime_error("diagnostics must be a boolean");
    s.diagnostics = doc.at("diagnostics").get<bool>();
  }
  s.storage = read_storage(doc);
  s.cluster = read_cluster(doc, s.storage);
  check_relay_settings(doc);
  s.key_directory = read_key_directory(doc);
  if (doc.contains("tls")) s.tls = read_tls(doc.at("tls"));
  if (doc.contains("console")) s.console = read_console(doc.at("console"));
  s.document = std::make_shared<const json>(doc);
  return s;
}

Settings load_settings_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read settings file " + path);
  std::stringstream text;
  text << in.rdbuf();
  json doc = json::parse(text.str(), nullptr, false);
  if (doc.is_discarded()) throw std::runtime_error("settings file " + path + " is not valid JSON");
  return settings_from_json(doc);
}

void apply_environment(Settings& settings) {
  if (const char* v = std::getenv("TYO_MQ_MAX_HTTP_BUFFER_SIZE")) {
    char* end = nullptr;
    unsigned long long n = std::strtoull(v, &end, 10);
    if (end == v || *end != '\0' || n == 0) throw std::runtime_error("TYO_MQ_MAX_HTTP_BUFFER_SIZE must be a positive integer");
    settings.transport.max_payload = static_cast<size_t>(n);
  }
}

}  // namespace siomq::server
