// HTTP publish (tyo-mq §9 `http_publish`): POST /pub/:realm/:event, POST /sub-ticket/:realm and
// GET /sub/:realm/:event (Server-Sent Events), on the server's port, over the tyo-mq surface's Context:
// tokens are checked by its AUTHENTICATION handler, publishing is its PRODUCE handler, SSE streams are
// engine endpoints. While disabled, /pub*, /sub* and /sub-ticket* answer 404 JSON.
//
// Ownership: the route returned holds the HttpPublish state (shared) and the Context; server::Server
// keeps the route in its HttpRoutes. Threading: requests are served on their connection's worker; the
// state inside locks (stream counts, tickets, rate buckets, history).
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "net/http_connection.h"
#include "surfaces/http/sse_history.h"
#include "surfaces/http/sse_stream.h"

namespace siomq::surfaces {
struct Context;
}

namespace siomq::surfaces::http {

struct HttpPublishOptions {
  bool enabled = false;
  size_t max_body_bytes = 64 * 1024;
  size_t streams_per_realm = 50;  // 503 past it
  size_t streams_per_ip = 10;     // 429 past it
  size_t max_tickets = 10000;
  size_t max_rate_keys = 10000;  // tokens (or addresses) whose publish rate is tracked
  SseStreamOptions stream;
  HistoryLimits history;
};

// The `http_publish` block of the settings document and TYO_MQ_HTTP_PUBLISH_ENABLED; throws
// std::runtime_error on a wrong type.
HttpPublishOptions http_publish_options(const nlohmann::json& document);

struct HttpPublishRoute {
  std::function<bool(const std::shared_ptr<net::HttpConnection>&, net::HttpRequest&)> handle;
  // The JSON 413 for a /pub body past the transport's own cap.
  std::function<std::string(std::string_view target)> too_large_body;
  // Drops expired tickets; call about once a second.
  std::function<void()> sweep;
};

// Builds the route and, when enabled, tells `ctx` to record guaranteed messages in `history` for SSE
// resume (the server owns it: it is loaded from the store before the surfaces start, and must outlive
// the route). Each SSE stream is counted in process_metrics() (surfaces/http/metrics.h) while it is open.
HttpPublishRoute make_http_publish(const std::shared_ptr<Context>& ctx, HttpPublishOptions options,
                                   SseHistory& history);

}  // namespace siomq::surfaces::http
