#include "transport/byte_stream.h"

#include <boost/asio/connect.hpp>
#include <boost/asio/ssl/host_name_verification.hpp>

namespace siomq::client {
namespace asio = boost::asio;
using asio::ip::tcp;

ByteStream::ByteStream(asio::io_context& io, const TransportOptions& options)
    : io_(io), options_(options), socket_(io), buffer_(65536) {
  if (options.tls) {
    tls_context_ = client_tls_context(options.ca_file);
    tls_ = std::make_unique<asio::ssl::stream<tcp::socket&>>(socket_, *tls_context_);
  }
}

ByteStream::~ByteStream() = default;

void ByteStream::connect(std::function<void(std::optional<std::string>)> done) {
  boost::system::error_code ec;
  tcp::resolver resolver(io_);
  auto endpoints = resolver.resolve(options_.host, std::to_string(options_.port), ec);
  if (ec) return done("resolve " + options_.host + ": " + ec.message());
  asio::async_connect(socket_, endpoints, [this, done = std::move(done)](const boost::system::error_code& cec, const tcp::endpoint&) {
    if (cec) return done("connect: " + cec.message());
    boost::system::error_code opt;
    socket_.set_option(tcp::no_delay(true), opt);
    if (!tls_) return done(std::nullopt);
    SSL_set_tlsext_host_name(tls_->native_handle(), options_.host.c_str());  // SNI
    tls_->set_verify_callback(asio::ssl::host_name_verification(options_.host));
    tls_->async_handshake(asio::ssl::stream_base::client, [done](const boost::system::error_code& hec) {
      if (hec) return done("tls handshake: " + hec.message());
      done(std::nullopt);
    });
  });
}

void ByteStream::close() {
  boost::system::error_code ec;
  socket_.shutdown(tcp::socket::shutdown_both, ec);
  socket_.close(ec);
}

}  // namespace siomq::client
