// Fuzzes the HTTP request path up to the point where a session would be touched: Beast's request
// parser with the server's limits, then target/query parsing, the Engine.IO request checks and the
// WebSocket handshake checks.
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "net/engine_request.h"
#include "net/http_request.h"

namespace http = boost::beast::http;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);

  // The query and header helpers on raw bytes.
  auto target = siomq::net::parse_target(input);
  for (const auto& [k, v] : target.query) {
    if (k.size() > input.size() || v.size() > input.size()) __builtin_trap();
  }
  (void)siomq::net::percent_decode(input);
  (void)siomq::net::header_has_token(input, "websocket");

  // The same parser configuration as HttpConnection, fed in two pieces to cover resumption.
  http::request_parser<http::string_body> parser;
  parser.header_limit(16384);
  parser.body_limit(1 << 20);
  parser.eager(true);
  boost::system::error_code ec;
  size_t split = size / 2;
  size_t used = parser.put(boost::asio::buffer(data, split), ec);
  if (ec == http::error::need_more) ec = {};
  if (!ec) {
    std::string rest(input.substr(used));
    parser.put(boost::asio::buffer(rest), ec);
  }
  if (ec || !parser.is_header_done()) return 0;

  const auto& req = parser.get();
  auto r = siomq::net::classify_engine_request(std::string_view(req.method_string()), req.target(),
                                               req[http::field::upgrade], "/socket.io/", true);
  if (r.kind == siomq::net::EngineRequest::kSession && r.sid.empty() && req.target().find("sid=") == std::string_view::npos)
    __builtin_trap();
  (void)siomq::net::engine_error_message(r.error);
  (void)siomq::net::websocket_upgrade_problem(std::string_view(req.method_string()), req[http::field::upgrade],
                                              req[http::field::connection], req[http::field::sec_websocket_version],
                                              req[http::field::sec_websocket_key]);
  return 0;
}
