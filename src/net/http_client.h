// A small asynchronous HTTP/1.1 client for the server's own outbound calls (external token
// validators, tyo-mq §6.4): one POST, one response, an overall deadline. Runs on the caller's
// io_context and never blocks it. https:// verifies the server's certificate and name against the
// system's trusted roots (SSL_CERT_FILE / SSL_CERT_DIR apply).
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "wire/result.h"

namespace boost::asio {
class io_context;
}

namespace siomq::net {

// What an http_post got back (the server's own responses are net::HttpResponse, in http_connection.h).
struct PostResponse {
  int status = 0;
  std::string body;
};

// POSTs `body` to `url`; `done` runs once on `io`: the response, or an Error (the URL is not http(s)://,
// the host does not resolve, the connection or the TLS handshake fails, the deadline passes, the
// response is over 64 KiB).
void http_post(boost::asio::io_context& io, const std::string& url, std::vector<std::pair<std::string, std::string>> headers,
               std::string body, std::chrono::milliseconds timeout, std::function<void(Result<PostResponse>)> done);

}  // namespace siomq::net
