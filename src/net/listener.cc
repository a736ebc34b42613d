#include "net/listener.h"

#include <boost/asio/post.hpp>
#include <spdlog/spdlog.h>

#include "net/connection_count.h"
#include "net/tls_context.h"
#include "net/worker_pool.h"

namespace siomq::net {
namespace asio = boost::asio;
namespace beast = boost::beast;
using asio::ip::tcp;

Listener::Listener(WorkerPool& pool, const HttpRoutes& routes, const TransportOptions& options, const TlsContext* tls)
    : pool_(pool), routes_(routes), options_(options), tls_(tls), acceptor_(pool.at(0).io()), backoff_(pool.at(0).io()) {}

void Listener::listen(const std::string& host, uint16_t port) {
  tcp::resolver resolver(pool_.at(0).io());
  auto results = resolver.resolve(host, std::to_string(port), tcp::resolver::passive);
  tcp::endpoint ep = results.begin()->endpoint();
  acceptor_.open(ep.protocol());
  acceptor_.set_option(asio::socket_base::reuse_address(true));
  acceptor_.bind(ep);
  acceptor_.listen(asio::socket_base::max_listen_connections);
}

uint16_t Listener::port() const { return acceptor_.local_endpoint().port(); }

void Listener::start() { asio::post(acceptor_.get_executor(), [this] { accept(); }); }

void Listener::stop() {
  asio::post(acceptor_.get_executor(), [this] {
    boost::system::error_code ec;
    acceptor_.close(ec);
    backoff_.cancel();
  });
}

void Listener::accept() {
  Worker& worker = pool_.next();
  acceptor_.async_accept(worker.io(), [this, &worker](const boost::system::error_code& ec, tcp::socket socket) {
    if (ec == asio::error::operation_aborted || !acceptor_.is_open()) return;
    if (ec) {
      // Out of descriptors and the like: log, pause briefly, keep serving the connections there are.
      spdlog::warn("accept: {}", ec.message());
      backoff_.expires_after(std::chrono::milliseconds(100));
      backoff_.async_wait([this](const boost::system::error_code& wec) {
        if (!wec) accept();
      });
      return;
    } else if (ConnectionCount::now() >= options_.max_connections) {
      // At the cap: closed at once, before any buffer is allocated for it. Logged once a second at most.
      auto now = std::chrono::steady_clock::now();
      if (now - last_refusal_log_ > std::chrono::seconds(1)) {
        last_refusal_log_ = now;
        spdlog::warn("accept: {} connections open (transport.max_connections); refusing new ones", ConnectionCount::now());
      }
      boost::system::error_code ignored;
      socket.close(ignored);
    } else {
      // Counted from here, once: the connection object made on the worker later adopts the count.
      ConnectionCount::reserve();
      asio::post(worker.io(), [this, &worker, socket = std::move(socket)]() mutable {
        std::unique_ptr<TlsSession> tls;
        if (tls_) tls = tls_->new_session(socket.native_handle());
        if (!tls_ || tls) {
          std::make_shared<HttpConnection>(std::move(socket), worker, pool_, routes_, options_, beast::flat_buffer{},
                                           std::move(tls), true)
              ->start();
        } else {
          ConnectionCount::unreserve();
          spdlog::warn("accept: cannot make a TLS session (out of memory?); connection closed");
        }
      });
    }
    accept();
  });
}

}  // namespace siomq::net
