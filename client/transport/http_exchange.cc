#include "transport/http_exchange.h"

#include <strings.h>

#include <cstdlib>

#include "transport/byte_stream.h"

namespace siomq::client {
namespace asio = boost::asio;

HttpExchange::HttpExchange(asio::io_context& io, const TransportOptions& options)
    : stream_(std::make_unique<ByteStream>(io, options)), options_(options) {}

HttpExchange::~HttpExchange() = default;

void HttpExchange::connect_then(std::function<void()> next) {
  if (connected_) return next();
  stream_->connect([self = shared_from_this(), next = std::move(next)](std::optional<std::string> failure) {
    if (self->closed_) return;
    if (failure) return self->finish(std::move(*failure), 0, {});
    self->connected_ = true;
    next();
  });
}

void HttpExchange::request(const char* method, std::string target, std::string body, Done done) {
  done_ = std::move(done);
  std::string bytes = std::string(method) + " " + target + " HTTP/1.1\r\nHost: " + options_.host + ":" +
                      std::to_string(options_.port) + "\r\nConnection: keep-alive\r\n";
  if (std::string_view(method) == "POST")
    bytes += "Content-Type: text/plain; charset=UTF-8\r\nContent-Length: " + std::to_string(body.size()) + "\r\n";
  bytes += "\r\n";
  bytes += body;
  connect_then([self = shared_from_this(), bytes = std::move(bytes)]() mutable { self->send(std::move(bytes)); });
}

void HttpExchange::send(std::string bytes) {
  auto held = std::make_shared<std::string>(std::move(bytes));
  stream_->write(asio::buffer(*held), [self = shared_from_this(), held](const boost::system::error_code& ec, size_t) {
    if (self->closed_) return;
    if (ec) return self->finish("write: " + ec.message(), 0, {});
    self->in_.clear();
    self->read_response();
  });
}

void HttpExchange::read_response() {
  stream_->read_some([self = shared_from_this()](const boost::system::error_code& ec, size_t n) {
    if (self->closed_) return;
    if (ec) return self->finish(ec == asio::error::eof ? "connection closed by the server" : ec.message(), 0, {});
    self->in_.append(self->stream_->buffer(), n);
    size_t end = self->in_.find("\r\n\r\n");
    if (end == std::string::npos) {
      if (self->in_.size() > 16384) self->finish("response head too large", 0, {});
      else self->read_response();
      return;
    }
    std::string_view head(self->in_.data(), end);
    if (!head.starts_with("HTTP/1.1 ") && !head.starts_with("HTTP/1.0 ")) return self->finish("not an HTTP response", 0, {});
    int status = std::atoi(std::string(head.substr(9, 3)).c_str());
    // Content-Length, case-insensitively.
    size_t length = SIZE_MAX;
    for (size_t at = head.find("\r\n"); at != std::string_view::npos; at = head.find("\r\n", at + 2)) {
      std::string_view line = head.substr(at + 2, head.find("\r\n", at + 2) - (at + 2));
      if (line.size() > 15 && strncasecmp(line.data(), "content-length:", 15) == 0)
        length = std::strtoull(std::string(line.substr(15)).c_str(), nullptr, 10);
    }
    if (length == SIZE_MAX) return self->finish("response without Content-Length", 0, {});
    if (length > self->options_.max_message) return self->finish("response body too large", 0, {});
    if (self->in_.size() - (end + 4) < length) return self->read_response();
    std::string body = self->in_.substr(end + 4, length);
    self->in_.erase(0, end + 4 + length);
    self->finish(std::nullopt, status, std::move(body));
  });
}

void HttpExchange::finish(std::optional<std::string> failure, int status, std::string body) {
  if (failure) connected_ = false;
  if (auto done = std::move(done_)) done(std::move(failure), status, std::move(body));
}

void HttpExchange::close() {
  if (closed_) return;
  closed_ = true;
  stream_->close();
  done_ = nullptr;
}

}  // namespace siomq::client
