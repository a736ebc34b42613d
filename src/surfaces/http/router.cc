#include "surfaces/http/router.h"

#include <boost/asio/post.hpp>

#include "net/worker_pool.h"
#include "surfaces/http/api_request.h"

namespace siomq::surfaces::http {
namespace beast_http = boost::beast::http;

namespace {

// Whether `segments` fit `pattern`; the raw parameter segments go to `params`.
bool matches(const std::vector<std::string>& pattern, const std::vector<std::string_view>& segments,
             std::vector<std::string_view>& params) {
  if (pattern.size() != segments.size()) return false;
  params.clear();
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] == "{}") {
      if (segments[i].empty()) return false;
      params.push_back(segments[i]);
    } else if (pattern[i] != segments[i]) {
      return false;
    }
  }
  return true;
}

}  // namespace

bool Router::dispatch(const std::shared_ptr<net::HttpConnection>& conn, net::HttpRequest& request,
                      const auth::Snapshot& snap) const {
  if (!snap.http_api.enabled) return false;
  auto segments = path_segments(request.target());
  if (!segments) return false;
  std::vector<std::string_view> raw;
  std::string allow;
  for (const Route& route : routes_) {
    if (!route.enabled(snap.http_api) || !matches(route.pattern, *segments, raw)) continue;
    if (route.method != request.method()) {
      std::string_view name = beast_http::to_string(route.method);
      if (allow.find(name) == std::string::npos) allow += allow.empty() ? std::string(name) : ", " + std::string(name);
      continue;
    }
    ApiCall call{conn, request, {}, snap};
    for (std::string_view p : raw) {
      auto decoded = decode_segment(p);
      if (!decoded) {
        conn->respond(error_response(request, 400, "malformed path: a bad %-escape or a control character"));
        return true;
      }
      call.params.push_back(std::move(*decoded));
    }
    route.handler(call);
    return true;
  }
  if (allow.empty()) return false;
  auto res = error_response(request, 405, "method not allowed");
  res.set(beast_http::field::allow, allow);
  if (request.method() == beast_http::verb::head) {
    res.body().clear();  // a HEAD response has no body
    res.prepare_payload();
  }
  conn->respond(std::move(res));
  return true;
}

net::HttpResponse json_response(const net::HttpRequest& request, beast_http::status status,
                                const nlohmann::ordered_json& body) {
  return net::make_response(request, status, body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace),
                            "application/json; charset=utf-8");
}

net::HttpResponse error_response(const net::HttpRequest& request, int code, std::string_view message) {
  return json_response(request, static_cast<beast_http::status>(code),
                       {{"ok", false}, {"code", code}, {"message", std::string(message)}});
}

net::HttpRequest reply_shape(const net::HttpRequest& request) {
  net::HttpRequest shape;
  shape.version(request.version());
  shape.keep_alive(request.keep_alive());
  return shape;
}

void respond_later(const std::shared_ptr<net::HttpConnection>& conn, net::HttpResponse response) {
  boost::asio::post(conn->worker().io(), [conn, res = std::move(response)]() mutable { conn->respond(std::move(res)); });
}

}  // namespace siomq::surfaces::http
