// The read-only HTTP API of tyo-mq §9 on the server's own port, off unless `http_api.enabled`:
//   GET  /health, /healthz             200 {status:"ok", version, uptime_seconds, node_id:null}, no auth
//   GET  /api/metrics                  Prometheus text (metrics.h); admin token unless metrics_auth:false
//   GET  /api/stats                    the `stats` command's object; admin token
//   GET  /api/realms/{realm}/dlq       {realm, entries:[…]} from the durable queues; admin token
//   POST /api/realms                   realm_provisioning.h
// "Admin token": when auth is on, `Authorization: Bearer <token>` of a token with realm "*" and role admin,
// compared by SHA-256 in constant time; when auth is off, nothing is asked. Errors are
// {ok:false, code, message}; a known path asked with another method gets 405 and `allow`.
//
// The settings are read live (auth::Snapshot::http_api): enabling, disabling or changing a flag applies to
// the next request.
//
// Ownership and threading: the route returned holds the Context and refers to `engine`, which the caller
// keeps alive as long as the listener that serves the route. It runs on the connection's worker; the
// metrics and DLQ answers are made on the durable queues' thread's callback and sent back to that worker.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "net/http_connection.h"

namespace siomq::net {
class EngineServer;
}

namespace siomq::surfaces {
struct Context;
}

namespace siomq::surfaces::http {

struct ApiParts {
  std::shared_ptr<Context> tyo_mq;  // the engine, the live settings and the sessions of namespace "/"
  net::EngineServer& engine;        // session counts and slow consumers, for the metrics
  size_t workers = 1;               // the worker pool's size
  std::string version;              // what /health reports
};

// The route to add to net::HttpRoutes.
using HttpRoute = std::function<bool(const std::shared_ptr<net::HttpConnection>&, net::HttpRequest&)>;
HttpRoute http_api_route(ApiParts parts);

}  // namespace siomq::surfaces::http
