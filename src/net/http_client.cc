#include "net/http_client.h"

#include <boost/asio/connect.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>

#include <memory>

namespace siomq::net {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

constexpr size_t kMaxResponseBody = 64 * 1024;

struct Target {
  std::string host, port, path;
};

Result<Target> parse_url(std::string_view url) {
  constexpr std::string_view scheme = "http://";
  if (!url.starts_with(scheme)) return make_error("only http:// URLs are supported: " + std::string(url), 400);
  url.remove_prefix(scheme.size());
  size_t slash = url.find('/');
  std::string_view authority = url.substr(0, slash);
  Target t{"", "80", slash == std::string_view::npos ? "/" : std::string(url.substr(slash))};
  if (authority.empty() || authority.find('@') != std::string_view::npos) return make_error("bad URL host", 400);
  size_t colon = authority.rfind(':');
  if (authority.front() == '[') {  // [v6]:port
    size_t close = authority.find(']');
    if (close == std::string_view::npos) return make_error("bad URL host", 400);
    t.host = std::string(authority.substr(1, close - 1));
    if (close + 1 < authority.size()) {
      if (authority[close + 1] != ':') return make_error("bad URL host", 400);
      t.port = std::string(authority.substr(close + 2));
    }
  } else if (colon != std::string_view::npos) {
    t.host = std::string(authority.substr(0, colon));
    t.port = std::string(authority.substr(colon + 1));
  } else {
    t.host = std::string(authority);
  }
  if (t.host.empty() || t.port.empty() || t.port.find_first_not_of("0123456789") != std::string::npos)
    return make_error("bad URL host or port", 400);
  return t;
}

class Call : public std::enable_shared_from_this<Call> {
 public:
  Call(asio::io_context& io, std::function<void(Result<HttpResponse>)> done)
      : resolver_(io), stream_(io), timer_(io), done_(std::move(done)) {
    parser_.body_limit(kMaxResponseBody);
  }

  void start(const Target& target, std::vector<std::pair<std::string, std::string>> headers, std::string body,
             std::chrono::milliseconds timeout) {
    request_ = {http::verb::post, target.path, 11};
    request_.set(http::field::host, target.host + ":" + target.port);
    request_.set(http::field::user_agent, "siomq-server");
    for (auto& [name, value] : headers) request_.set(name, value);
    request_.body() = std::move(body);
    request_.prepare_payload();
    timer_.expires_after(timeout);
    timer_.async_wait([self = shared_from_this()](const boost::system::error_code& ec) {
      if (ec) return;
      self->finish(make_error("the request timed out", 504));
    });
    resolver_.async_resolve(target.host, target.port,
                            [self = shared_from_this()](const boost::system::error_code& ec, tcp::resolver::results_type r) {
                              if (ec) return self->finish(make_error("cannot resolve: " + ec.message(), 502));
                              self->connect(r);
                            });
  }

 private:
  void connect(const tcp::resolver::results_type& endpoints) {
    stream_.async_connect(endpoints, [self = shared_from_this()](const boost::system::error_code& ec, const tcp::endpoint&) {
      if (ec) return self->finish(make_error("cannot connect: " + ec.message(), 502));
      http::async_write(self->stream_, self->request_, [self](const boost::system::error_code& ec, size_t) {
        if (ec) return self->finish(make_error("cannot send: " + ec.message(), 502));
        http::async_read(self->stream_, self->buffer_, self->parser_, [self](const boost::system::error_code& ec, size_t) {
          if (ec) return self->finish(make_error("bad response: " + ec.message(), 502));
          auto& res = self->parser_.get();
          self->finish(HttpResponse{static_cast<int>(res.result_int()), std::move(res.body())});
        });
      });
    });
  }

  // Runs `done_` once; whatever is still pending is cancelled and completes into nothing.
  void finish(Result<HttpResponse> result) {
    if (!done_) return;
    auto done = std::move(done_);
    done_ = nullptr;
    timer_.cancel();
    resolver_.cancel();
    boost::system::error_code ignored;
    stream_.socket().close(ignored);
    done(std::move(result));
  }

  tcp::resolver resolver_;
  beast::tcp_stream stream_;
  asio::steady_timer timer_;
  beast::flat_buffer buffer_;
  http::request<http::string_body> request_;
  http::response_parser<http::string_body> parser_;
  std::function<void(Result<HttpResponse>)> done_;
};

}  // namespace

void http_post(asio::io_context& io, const std::string& url, std::vector<std::pair<std::string, std::string>> headers,
               std::string body, std::chrono::milliseconds timeout, std::function<void(Result<HttpResponse>)> done) {
  auto target = parse_url(url);
  if (!target) {
    asio::post(io, [done = std::move(done), e = target.error()] { done(e); });
    return;
  }
  std::make_shared<Call>(io, std::move(done))->start(*target, std::move(headers), std::move(body), timeout);
}

}  // namespace siomq::net
