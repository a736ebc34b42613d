// The `http_api` block of the settings (tyo-mq §9): which read-only HTTP routes the server answers on its
// port, and whether /api/metrics asks for the admin token. Off unless the block says `enabled: true`.
// Plain data, read live: it is part of every auth::Snapshot, so a changed settings file (SIGHUP, a
// management command, the file watcher) switches the routes on or off without a restart.
#pragma once

#include <nlohmann/json_fwd.hpp>

namespace siomq::auth {

struct HttpApiConfig {
  bool enabled = false;
  bool health = true;        // GET /health and /healthz
  bool metrics = true;       // GET /api/metrics
  bool stats = true;         // GET /api/stats and /api/realms/{realm}/dlq
  bool metrics_auth = true;  // /api/metrics wants the admin token when auth is on
};

// Reads `http_api` (or its alias `httpApi`) from the settings document. Strict: the block must be an
// object and each key a boolean; an unknown key is an error too (a misspelt `metrics_auth` must not leave
// the metrics open). Throws std::runtime_error naming the key.
HttpApiConfig parse_http_api(const nlohmann::json& document);

}  // namespace siomq::auth
