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
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/host_name_verification.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>

#include <memory>
#include <type_traits>

namespace siomq::net {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

constexpr size_t kMaxResponseBody = 64 * 1024;

struct UrlTarget {
  std::string host, port, path;
  bool tls = false;
};

Result<UrlTarget> parse_url(std::string_view url) {
  bool tls = url.starts_with("https://");
  if (!tls && !url.starts_with("http://")) return make_error("only http:// and https:// URLs are supported: " + std::string(url), 400);
  url.remove_prefix(tls ? 8 : 7);
  size_t slash = url.find('/');
  std::string_view authority = url.substr(0, slash);
  UrlTarget t{"", tls ? "443" : "80", slash == std::string_view::npos ? "/" : std::string(url.substr(slash)), tls};
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

// The TLS settings every https call shares: the system's trusted roots (OpenSSL's default paths, so
// SSL_CERT_FILE / SSL_CERT_DIR apply), peer verification, TLS 1.2 at least.
asio::ssl::context& tls_context() {
  static asio::ssl::context ctx = [] {
    asio::ssl::context c(asio::ssl::context::tls_client);
    c.set_options(asio::ssl::context::default_workarounds | asio::ssl::context::no_sslv2 |
                  asio::ssl::context::no_sslv3 | asio::ssl::context::no_tlsv1 | asio::ssl::context::no_tlsv1_1);
    c.set_default_verify_paths();
    c.set_verify_mode(asio::ssl::verify_peer);
    return c;
  }();
  return ctx;
}

using PlainStream = beast::tcp_stream;
using TlsStream = beast::ssl_stream<beast::tcp_stream>;

template <class Stream>
class Call : public std::enable_shared_from_this<Call<Stream>> {
 public:
  Call(asio::io_context& io, std::function<void(Result<PostResponse>)> done)
      : resolver_(io), stream_(make_stream(io)), timer_(io), done_(std::move(done)) {
    parser_.body_limit(kMaxResponseBody);
  }

  void start(const UrlTarget& target, std::vector<std::pair<std::string, std::string>> headers, std::string body,
             std::chrono::milliseconds timeout) {
    request_ = {http::verb::post, target.path, 11};
    request_.set(http::field::host, target.host + ":" + target.port);
    request_.set(http::field::user_agent, "siomq-server");
    for (auto& [name, value] : headers) request_.set(name, value);
    request_.body() = std::move(body);
    request_.prepare_payload();
    if constexpr (std::is_same_v<Stream, TlsStream>) {
      // SNI, and the certificate must name the host.
      if (!SSL_set_tlsext_host_name(stream_.native_handle(), target.host.c_str()))
        return finish(make_error("cannot set the TLS server name", 502));
      stream_.set_verify_callback(asio::ssl::host_name_verification(target.host));
    }
    timer_.expires_after(timeout);
    timer_.async_wait([self = this->shared_from_this()](const boost::system::error_code& ec) {
      if (ec) return;
      self->finish(make_error("the request timed out", 504));
    });
    resolver_.async_resolve(target.host, target.port,
                            [self = this->shared_from_this()](const boost::system::error_code& ec, tcp::resolver::results_type r) {
                              if (ec) return self->finish(make_error("cannot resolve: " + ec.message(), 502));
                              self->connect(r);
                            });
  }

 private:
  static Stream make_stream(asio::io_context& io) {
    if constexpr (std::is_same_v<Stream, TlsStream>) return Stream(io, tls_context());
    else return Stream(io);
  }

  void connect(const tcp::resolver::results_type& endpoints) {
    beast::get_lowest_layer(stream_).async_connect(
        endpoints, [self = this->shared_from_this()](const boost::system::error_code& ec, const tcp::endpoint&) {
          if (ec) return self->finish(make_error("cannot connect: " + ec.message(), 502));
          if constexpr (std::is_same_v<Stream, TlsStream>) {
            self->stream_.async_handshake(asio::ssl::stream_base::client, [self](const boost::system::error_code& ec) {
              if (ec) return self->finish(make_error("TLS handshake failed: " + ec.message(), 502));
              self->exchange();
            });
          } else {
            self->exchange();
          }
        });
  }

  void exchange() {
    auto self = this->shared_from_this();
    http::async_write(stream_, request_, [self](const boost::system::error_code& ec, size_t) {
      if (ec) return self->finish(make_error("cannot send: " + ec.message(), 502));
      http::async_read(self->stream_, self->buffer_, self->parser_, [self](const boost::system::error_code& ec, size_t) {
        if (ec) return self->finish(make_error("bad response: " + ec.message(), 502));
        auto& res = self->parser_.get();
        self->finish(PostResponse{static_cast<int>(res.result_int()), std::move(res.body())});
      });
    });
  }

  // Runs `done_` once; whatever is still pending is cancelled and completes into nothing.
  void finish(Result<PostResponse> result) {
    if (!done_) return;
    auto done = std::move(done_);
    done_ = nullptr;
    timer_.cancel();
    resolver_.cancel();
    boost::system::error_code ignored;
    beast::get_lowest_layer(stream_).socket().close(ignored);
    done(std::move(result));
  }

  tcp::resolver resolver_;
  Stream stream_;
  asio::steady_timer timer_;
  beast::flat_buffer buffer_;
  http::request<http::string_body> request_;
  http::response_parser<http::string_body> parser_;
  std::function<void(Result<PostResponse>)> done_;
};

}  // namespace

void http_post(asio::io_context& io, const std::string& url, std::vector<std::pair<std::string, std::string>> headers,
               std::string body, std::chrono::milliseconds timeout, std::function<void(Result<PostResponse>)> done) {
  auto target = parse_url(url);
  if (!target) {
    asio::post(io, [done = std::move(done), e = target.error()] { done(e); });
    return;
  }
  if (target->tls) std::make_shared<Call<TlsStream>>(io, std::move(done))->start(*target, std::move(headers), std::move(body), timeout);
  else std::make_shared<Call<PlainStream>>(io, std::move(done))->start(*target, std::move(headers), std::move(body), timeout);
}

}  // namespace siomq::net
