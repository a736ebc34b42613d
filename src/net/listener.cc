#include "net/listener.h"

#include <boost/asio/post.hpp>
#include <spdlog/spdlog.h>

#include "net/worker_pool.h"

namespace siomq::net {
namespace asio = boost::asio;
using asio::ip::tcp;

Listener::Listener(WorkerPool& pool, const HttpRoutes& routes, const TransportOptions& options)
    : pool_(pool), routes_(routes), options_(options), acceptor_(pool.at(0).io()), backoff_(pool.at(0).io()) {}

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
    } else {
      asio::post(worker.io(), [this, &worker, socket = std::move(socket)]() mutable {
        std::make_shared<HttpConnection>(std::move(socket), worker, pool_, routes_, options_)->start();
      });
    }
    accept();
  });
}

}  // namespace siomq::net
