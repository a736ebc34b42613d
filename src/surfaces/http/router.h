// The HTTP API's routing: a table of (method, path pattern) → handler, matched segment by segment (no
// regex), with the answers every route shares — JSON bodies, {ok:false, code, message} errors, 405 with
// an `allow` header for a known path asked with another method — and the responses sent from other threads.
//
// A request whose path matches no enabled route is not claimed (the next route of net::HttpRoutes sees it;
// at the end the listener answers 403, as the reference does for a path it does not serve).
//
// Threading: dispatch() on the connection's worker; a handler may answer later from any thread through
// respond_later(), which hands the response back to the connection's worker.
#pragma once

#include <nlohmann/json.hpp>

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "auth/live_settings.h"
#include "net/http_connection.h"

namespace siomq::surfaces::http {

// One request as a route's handler sees it. `params` are the decoded "{}" segments of the pattern, in order.
struct ApiCall {
  std::shared_ptr<net::HttpConnection> conn;
  net::HttpRequest& request;
  std::vector<std::string> params;
  const auth::Snapshot& snap;
};

struct Route {
  boost::beast::http::verb method;
  std::vector<std::string> pattern;  // path segments; "{}" matches any one segment
  // Whether the settings serve this route now (http_api's flags); a disabled route does not exist.
  std::function<bool(const auth::HttpApiConfig&)> enabled;
  std::function<void(ApiCall&)> handler;
};

class Router {
 public:
  void add(Route route) { routes_.push_back(std::move(route)); }
  // Answers the request if an enabled route's path matches it (405 when only the method differs, 400 when a
  // parameter does not decode); false when no route's path matches (or http_api is off).
  bool dispatch(const std::shared_ptr<net::HttpConnection>& conn, net::HttpRequest& request, const auth::Snapshot& snap) const;

 private:
  std::vector<Route> routes_;
};

// A JSON response (`application/json; charset=utf-8`).
net::HttpResponse json_response(const net::HttpRequest& request, boost::beast::http::status status,
                                const nlohmann::ordered_json& body);
// {ok:false, code, message} with `code` as the HTTP status.
net::HttpResponse error_response(const net::HttpRequest& request, int code, std::string_view message);
// What a response needs of its request (HTTP version, keep-alive), kept by a handler that answers later:
// the request itself is gone once dispatch() returns.
net::HttpRequest reply_shape(const net::HttpRequest& request);
// Sends `response` on the connection's worker, from any thread.
void respond_later(const std::shared_ptr<net::HttpConnection>& conn, net::HttpResponse response);

}  // namespace siomq::surfaces::http
