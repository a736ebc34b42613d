#include "surfaces/http/http_publish.h"

#include <boost/beast/http/field.hpp>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <stdexcept>

#include "surfaces/http/metrics.h"
#include "surfaces/http/publish_state.h"
#include "surfaces/http/sse_frame.h"
#include "wire/clock.h"

namespace siomq::surfaces::http {
namespace {
namespace bh = boost::beast::http;
using nlohmann::json;

size_t read_count(const json& block, const char* key, size_t fallback) {
  if (!block.contains(key)) return fallback;
  const json& v = block.at(key);
  if (!v.is_number_integer() || v.get<int64_t>() <= 0)
    throw std::runtime_error(std::string("http_publish.") + key + " must be a positive integer");
  return static_cast<size_t>(v.get<int64_t>());
}

// Which of the three families a target belongs to: "pub", "sub", "sub-ticket", or "" for none.
std::string_view family(std::string_view target) {
  for (std::string_view f : {"/sub-ticket", "/pub", "/sub"}) {
    if (target.starts_with(f) && (target.size() == f.size() || target[f.size()] == '/' || target[f.size()] == '?'))
      return f.substr(1);
  }
  return {};
}

}  // namespace

HttpPublishOptions http_publish_options(const json& document) {
  HttpPublishOptions o;
  if (document.is_object() && document.contains("http_publish")) {
    const json& b = document.at("http_publish");
    if (!b.is_object()) throw std::runtime_error("http_publish must be an object");
    if (b.contains("enabled")) {
      if (!b.at("enabled").is_boolean()) throw std::runtime_error("http_publish.enabled must be a boolean");
      o.enabled = b.at("enabled").get<bool>();
    }
    o.max_body_bytes = read_count(b, "max_body_bytes", o.max_body_bytes);
    o.streams_per_realm = read_count(b, "sse_streams_per_realm", o.streams_per_realm);
    o.streams_per_ip = read_count(b, "sse_streams_per_ip", o.streams_per_ip);
    o.max_tickets = read_count(b, "max_tickets", o.max_tickets);
    o.stream.keep_alive = std::chrono::milliseconds(read_count(b, "sse_keep_alive_ms", 25000));
    o.stream.max_pending_bytes = read_count(b, "sse_max_pending_bytes", o.stream.max_pending_bytes);
    o.history.max_messages = read_count(b, "history_messages", o.history.max_messages);
    o.history.max_bytes = read_count(b, "history_bytes", o.history.max_bytes);
    o.history.max_events = read_count(b, "history_events", o.history.max_events);
    o.history.max_total_bytes = read_count(b, "history_total_bytes", o.history.max_total_bytes);
  }
  if (const char* env = std::getenv("TYO_MQ_HTTP_PUBLISH_ENABLED")) {
    std::string_view v(env);
    if (v == "1" || v == "true") o.enabled = true;
  }
  return o;
}

void answer_json(const std::shared_ptr<net::HttpConnection>& conn, const net::HttpRequest& req, int status,
                 std::string body) {
  auto res = net::make_response(req, static_cast<bh::status>(status), std::move(body), "application/json; charset=utf-8");
  conn->respond(std::move(res));
}

void answer_error(const std::shared_ptr<net::HttpConnection>& conn, const net::HttpRequest& req, int status,
                  std::string_view message, std::string_view allow) {
  auto res = net::make_response(req, static_cast<bh::status>(status), error_body(status, message),
                                "application/json; charset=utf-8");
  if (!allow.empty()) res.set(bh::field::allow, allow);
  conn->respond(std::move(res));
}

void serve_ticket(const std::shared_ptr<PublishState>& state, const std::shared_ptr<net::HttpConnection>& conn,
                  net::HttpRequest& req, const HttpTarget& target) {
  if (req.method() != bh::verb::post) return answer_error(conn, req, 405, "Method not allowed", "POST");
  if (target.segments.size() != 2) return answer_error(conn, req, 404, "Not found");
  const std::string realm = target.segments[1];
  if (reserved_name(realm)) return answer_error(conn, req, 400, "Invalid realm name");
  auto session = std::make_shared<HttpSession>(conn->worker(), conn->remote_address());
  auto token = bearer_token(req[bh::field::authorization]);  // before `req` moves into the callback
  grant_for_realm(*state->ctx, session, token, realm,
                  [state, conn, session, req = std::move(req)](std::optional<HttpError> refused) {
                    if (refused) return answer_error(conn, req, refused->status, refused->message);
                    const auth::Snapshot& snap = state->ctx->settings.current();
                    auto g = auth::gate(snap.auth, session->grant, std::nullopt, "SUBSCRIBE", {"consumer"});
                    if (!g.allowed) return answer_error(conn, req, 403, "Token role cannot consume");
                    auto ticket = state->tickets.issue(*session->grant, steady_ms());
                    if (!ticket) return answer_error(conn, req, 503, "Too many outstanding tickets");
                    answer_json(conn, req, 200, json{{"ok", true}, {"ticket", *ticket}, {"expires_in", 60}}.dump());
                  });
}

void serve_events(const std::shared_ptr<PublishState>& state, const std::shared_ptr<net::HttpConnection>& conn,
                  net::HttpRequest& req, const HttpTarget& target) {
  if (req.method() != bh::verb::get) return answer_error(conn, req, 405, "Method not allowed", "GET");
  if (target.segments.size() != 3) return answer_error(conn, req, 404, "Not found");
  const std::string realm = target.segments[1], event = target.segments[2];
  if (reserved_name(realm) || reserved_name(event)) return answer_error(conn, req, 400, "Invalid realm or event name");
  if (target.param("token")) return answer_error(conn, req, 401, "Tokens in the URL are refused: use a Bearer header or a ticket");
  std::optional<std::string> since;
  if (auto h = req["last-event-id"]; !h.empty()) since = std::string(h);
  else if (const std::string* s = target.param("since")) since = *s;
  if (since && !frame_safe_id(*since)) return answer_error(conn, req, 400, "Invalid Last-Event-ID");

  // Once authorized: the caps, then the stream.
  auto start = [state, conn, realm, event, since](const net::HttpRequest& request) {
    const std::string ip = conn->remote_address();
    {
      std::lock_guard lock(state->streams_mu);
      if (state->streams_by_realm[realm] >= state->options.streams_per_realm) {
        if (state->streams_by_realm[realm] == 0) state->streams_by_realm.erase(realm);
        return answer_error(conn, request, 503, "Too many event streams in this realm");
      }
      if (state->streams_by_ip[ip] >= state->options.streams_per_ip) {
        if (state->streams_by_realm[realm] == 0) state->streams_by_realm.erase(realm);
        return answer_error(conn, request, 429, "Too many event streams from this address");
      }
      ++state->streams_by_realm[realm];
      ++state->streams_by_ip[ip];
    }
    // Counted in tyo_mq_sse_connections_total{realm}.
    process_metrics().sse_stream_opened(realm);
    auto stream = std::make_shared<SseStream>(conn, realm, event, state->options.stream);
    stream->open(request, state->ctx->broker, state->history, since, [state, realm, ip] {
      std::lock_guard lock(state->streams_mu);
      if (--state->streams_by_realm[realm] == 0) state->streams_by_realm.erase(realm);
      if (--state->streams_by_ip[ip] == 0) state->streams_by_ip.erase(ip);
    });
  };
  if (const std::string* ticket = target.param("ticket")) {
    if (!state->tickets.take(*ticket, realm, steady_ms())) return answer_error(conn, req, 401, "Invalid or expired ticket");
    return start(req);
  }
  auto session = std::make_shared<HttpSession>(conn->worker(), conn->remote_address());
  auto token = bearer_token(req[bh::field::authorization]);  // before `req` moves into the callback
  grant_for_realm(*state->ctx, session, token, realm,
                  [state, conn, session, start, req = std::move(req)](std::optional<HttpError> refused) {
                    if (refused) return answer_error(conn, req, refused->status, refused->message);
                    const auth::Snapshot& snap = state->ctx->settings.current();
                    auto g = auth::gate(snap.auth, session->grant, std::nullopt, "SUBSCRIBE", {"consumer"});
                    if (!g.allowed) return answer_error(conn, req, 403, "Token role cannot consume");
                    start(req);
                  });
}

HttpPublishRoute make_http_publish(const std::shared_ptr<Context>& ctx, HttpPublishOptions options,
                                   SseHistory& history) {
  auto state = std::make_shared<PublishState>(ctx, options, history);
  if (options.enabled) {
    ctx->on_guaranteed = [&history](const std::string& realm, std::string_view event, std::string_view id,
                                    std::string_view payload, std::function<void(const Status&)> done) {
      auto frame = sse_frame(id, payload);
      if (frame) return history.record(realm, event, std::string(id), std::move(*frame), std::move(done));
      if (done) done(Ok{});
      return true;
    };
  }
  // Whether or not it is enabled now: the history may hold windows from when it was.
  ctx->on_realm_removed = [&history, before = std::move(ctx->on_realm_removed)](const std::string& realm) {
    if (before) before(realm);
    history.purge_realm(realm);
  };
  HttpPublishRoute route;
  route.handle = [state](const std::shared_ptr<net::HttpConnection>& conn, net::HttpRequest& req) {
    std::string_view f = family(std::string_view(req.target().data(), req.target().size()));
    if (f.empty()) return false;
    if (!state->options.enabled) {
      answer_error(conn, req, 404, "Not found");
      return true;
    }
    auto target = parse_target(std::string_view(req.target().data(), req.target().size()));
    if (!target) {
      answer_error(conn, req, target.error().code ? target.error().code : 400, target.error().message);
      return true;
    }
    if (f == "pub") serve_publish(state, conn, req, *target);
    else if (f == "sub") serve_events(state, conn, req, *target);
    else serve_ticket(state, conn, req, *target);
    return true;
  };
  route.too_large_body = [state](std::string_view target) -> std::string {
    if (!state->options.enabled || family(target) != "pub") return {};
    return error_body(413, "Payload too large");
  };
  route.sweep = [state] { state->tickets.sweep(steady_ms()); };
  return route;
}

}  // namespace siomq::surfaces::http
