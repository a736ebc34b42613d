#include "surfaces/http/api.h"

#include <boost/asio/post.hpp>

#include <chrono>

#include "auth/hmac.h"
#include "broker/durable_queues.h"
#include "net/engine_server.h"
#include "net/worker_pool.h"
#include "surfaces/http/api_request.h"
#include "surfaces/http/metrics.h"
#include "surfaces/http/realm_provisioning.h"
#include "surfaces/http/router.h"
#include "surfaces/tyo_mq/context.h"
#include "surfaces/tyo_mq/management_queues.h"

namespace siomq::surfaces::http {
namespace {

namespace beast_http = boost::beast::http;
using nlohmann::json;

constexpr std::string_view kAdminRequired = "Bearer admin token required";

// Whether the request may read the admin routes: always while auth is off; else its bearer token must be
// an admin token (realm "*", role admin). Every admin token is compared (SHA-256 digests, constant time),
// so the time taken says nothing of which one, if any, matched.
bool admin_authorized(const auth::Snapshot& snap, const net::HttpRequest& request) {
  if (!snap.auth.enabled) return true;
  auto token = bearer_token(request[beast_http::field::authorization]);
  if (!token) return false;
  bool ok = false;
  for (const auto& t : snap.auth.tokens) {
    if (t.realm == "*" && t.role == "admin" && !t.token.empty()) ok |= auth::equal_secrets(*token, t.token);
  }
  return ok;
}

bool refuse_unless_admin(ApiCall& call) {
  if (admin_authorized(call.snap, call.request)) return false;
  call.conn->respond(error_response(call.request, 401, kAdminRequired));
  return true;
}

class Api : public std::enable_shared_from_this<Api> {
 public:
  explicit Api(ApiParts parts) : parts_(std::move(parts)), provisioning_(parts_.tyo_mq) {}

  void add_routes() {
    // The routes live in router_, a member: they hold the Api by `this`, not by a shared_ptr to itself.
    Api* self = this;
    auto health_on = [](const auth::HttpApiConfig& c) { return c.health; };
    for (const char* path : {"health", "healthz"})
      router_.add({beast_http::verb::get, {path}, health_on, [self](ApiCall& c) { self->health(c); }});
    router_.add({beast_http::verb::get, {"api", "metrics"}, [](const auth::HttpApiConfig& c) { return c.metrics; },
                 [self](ApiCall& c) { self->metrics(c); }});
    auto stats_on = [](const auth::HttpApiConfig& c) { return c.stats; };
    router_.add({beast_http::verb::get, {"api", "stats"}, stats_on, [self](ApiCall& c) { self->stats(c); }});
    router_.add({beast_http::verb::get, {"api", "realms", "{}", "dlq"}, stats_on, [self](ApiCall& c) { self->dlq(c); }});
    router_.add({beast_http::verb::post, {"api", "realms"}, [](const auth::HttpApiConfig&) { return true; },
                 [self](ApiCall& c) { self->provisioning_.handle(c); }});
  }

  bool dispatch(const std::shared_ptr<net::HttpConnection>& conn, net::HttpRequest& request) {
    return router_.dispatch(conn, request, parts_.tyo_mq->settings.current());
  }

 private:
  void health(ApiCall& c) {
    auto up = std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now() - started_).count();
    c.conn->respond(json_response(
        c.request, beast_http::status::ok,
        {{"status", "ok"},
         {"version", parts_.version},
         {"uptime_seconds", up},
         {"node_id", parts_.tyo_mq->cluster ? json(parts_.tyo_mq->cluster->node_id()) : json()}}));
  }

  // The queue totals come from the queues' thread; the text is made back on the connection's worker, so
  // that a large scrape does not hold up the queues.
  void metrics(ApiCall& c) {
    if (c.snap.http_api.metrics_auth && refuse_unless_admin(c)) return;
    parts_.tyo_mq->queues.stats([self = shared_from_this(), conn = c.conn, shape = reply_shape(c.request)](
                                    const broker::QueueStats& q) {
      boost::asio::post(conn->worker().io(), [self, conn, shape, q] {
        Metrics::Now now;
        cluster::LinkStats link_stats;
        if (const auto& link = self->parts_.tyo_mq->cluster) {
          link_stats = link->stats();
          now.cluster = &link_stats;
        }
        now.connections_current = self->parts_.engine.session_count();
        for (size_t i = 0; i < self->parts_.workers; ++i) now.worker_sessions.push_back(self->parts_.engine.sessions_on(i));
        now.slow_consumers = self->parts_.engine.slow_consumers();
        now.queues = &q;
        conn->respond(net::make_response(shape, beast_http::status::ok, process_metrics().render(now),
                                         "text/plain; version=0.0.4; charset=utf-8"));
      });
    });
  }

  void stats(ApiCall& c) {
    if (refuse_unless_admin(c)) return;
    c.conn->respond(net::make_response(c.request, beast_http::status::ok, management::stats_json(*parts_.tyo_mq).dump(),
                                       "application/json; charset=utf-8"));
  }

  void dlq(ApiCall& c) {
    if (refuse_unless_admin(c)) return;
    std::string realm = c.params[0];
    parts_.tyo_mq->queues.dlq_list(realm, [conn = c.conn, shape = reply_shape(c.request), realm](std::vector<store::DeadRow> rows) {
      json entries = json::array();
      for (const auto& d : rows) entries.push_back(management::dlq_entry(d));
      std::string body = "{\"realm\":" + json(realm).dump() + ",\"entries\":" +
                         entries.dump(-1, ' ', false, json::error_handler_t::replace) + "}";
      respond_later(conn, net::make_response(shape, beast_http::status::ok, std::move(body), "application/json; charset=utf-8"));
    });
  }

  ApiParts parts_;
  RealmProvisioning provisioning_;
  Router router_;
  const std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
};

}  // namespace

HttpRoute http_api_route(ApiParts parts) {
  auto api = std::make_shared<Api>(std::move(parts));
  api->add_routes();
  return [api](const std::shared_ptr<net::HttpConnection>& conn, net::HttpRequest& request) {
    return api->dispatch(conn, request);
  };
}

}  // namespace siomq::surfaces::http
