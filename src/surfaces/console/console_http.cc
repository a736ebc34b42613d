#include "surfaces/console/console_http.h"

#include <boost/beast/core/string.hpp>

#include <string_view>

#include "surfaces/console/console_assets.h"

namespace siomq::surfaces::console {
namespace {

namespace beast_http = boost::beast::http;

// connect-src 'self' covers the page's own ws:/wss: origin (CSP level 3).
constexpr std::string_view kPolicy =
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
    "base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

void secure(net::HttpResponse& res) {
  res.set("Content-Security-Policy", kPolicy);
  res.set("X-Content-Type-Options", "nosniff");
  res.set("X-Frame-Options", "DENY");
  res.set("Referrer-Policy", "no-referrer");
  res.set("Cross-Origin-Opener-Policy", "same-origin");
  res.set("Cross-Origin-Resource-Policy", "same-origin");
}

void answer(const std::shared_ptr<net::HttpConnection>& conn, const net::HttpRequest& request, beast_http::status status,
            std::string body = {}, const char* type = "text/plain; charset=utf-8") {
  auto res = net::make_response(request, status, std::move(body), type);
  secure(res);
  conn->respond(std::move(res));
}

void redirect(const std::shared_ptr<net::HttpConnection>& conn, const net::HttpRequest& request) {
  auto res = net::make_response(request, beast_http::status::found);
  res.set(beast_http::field::location, "/console/");
  secure(res);
  conn->respond(std::move(res));
}

const ConsoleAsset* find_asset(std::string_view path) {
  if (path.empty()) path = "index.html";
  for (const auto& a : console_assets())
    if (a.path == path) return &a;
  return nullptr;
}

}  // namespace

bool refuse_cross_origin(const std::shared_ptr<net::HttpConnection>& conn, const net::HttpRequest& request) {
  auto origin = request.find(beast_http::field::origin);
  if (origin == request.end()) return false;
  std::string_view o = origin->value();
  size_t scheme = o.find("://");
  std::string_view host = request[beast_http::field::host];
  if (scheme != std::string_view::npos && !host.empty() && boost::beast::iequals(o.substr(scheme + 3), host)) return false;
  answer(conn, request, beast_http::status::forbidden, "cross-origin requests are refused on the console's port\n");
  return true;
}

bool serve_console_page(const std::shared_ptr<net::HttpConnection>& conn, net::HttpRequest& request) {
  std::string_view target = request.target();
  std::string_view path = target.substr(0, target.find_first_of("?#"));
  constexpr std::string_view kRoot = "/console/";
  bool page = path.starts_with(kRoot);
  if (!page && path != "/" && path != "/console") return false;
  if (request.method() != beast_http::verb::get && request.method() != beast_http::verb::head) {
    auto res = net::make_response(request, beast_http::status::method_not_allowed, "GET or HEAD\n", "text/plain; charset=utf-8");
    res.set(beast_http::field::allow, "GET, HEAD");
    secure(res);
    conn->respond(std::move(res));
    return true;
  }
  if (!page) {
    redirect(conn, request);
    return true;
  }
  // An exact match in a fixed table: no path is ever joined to a directory, so "..", "%2e" and the like
  // simply find nothing.
  const ConsoleAsset* asset = find_asset(path.substr(kRoot.size()));
  if (!asset) {
    answer(conn, request, beast_http::status::not_found, "not found\n");
    return true;
  }
  if (request[beast_http::field::if_none_match] == asset->etag) {
    auto res = net::make_response(request, beast_http::status::not_modified);
    res.set(beast_http::field::etag, asset->etag);
    secure(res);
    conn->respond(std::move(res));
    return true;
  }
  auto res = net::make_response(request, beast_http::status::ok, std::string(asset->body), asset->content_type);
  res.set(beast_http::field::etag, asset->etag);
  res.set(beast_http::field::cache_control, "no-cache");
  secure(res);
  if (request.method() == beast_http::verb::head) {
    res.content_length(asset->body.size());
    res.body().clear();
  }
  conn->respond(std::move(res));
  return true;
}

}  // namespace siomq::surfaces::console
