// A TCP connection's descriptor handed from one Asio socket object to another: to another worker's
// io_context (an HTTP request that belongs to another worker), or to a socket of another executor type
// (a WebSocket's, websocket_connection.h). The descriptor leaves the first object's reactor and is
// registered anew by the second; the connection itself is untouched (a TLS session on it goes on as it is).
//
// Threading: hand_off() on the first socket's thread, take() on the second's; nothing may be pending on
// the first socket.
#pragma once

#include <unistd.h>

#include <boost/asio/ip/tcp.hpp>

#include <optional>

namespace siomq::net {

struct SocketHandoff {
  boost::asio::ip::tcp protocol;
  int fd;
};

// Takes the descriptor out of `socket`; nothing if it is closed or cannot say its protocol (reset
// already: the connection is over, and `socket` closes it).
inline std::optional<SocketHandoff> hand_off(boost::asio::ip::tcp::socket& socket) {
  boost::system::error_code ec;
  auto protocol = socket.local_endpoint(ec).protocol();
  if (ec) return std::nullopt;
  int fd = socket.release(ec);
  if (ec) return std::nullopt;
  return SocketHandoff{protocol, fd};
}

// Gives the descriptor to `into` (closed, on the thread that will use it); false, the descriptor closed,
// if it cannot.
template <class Socket>
bool take(Socket& into, const SocketHandoff& h) {
  boost::system::error_code ec;
  into.assign(h.protocol, h.fd, ec);
  if (ec) ::close(h.fd);
  return !ec;
}

}  // namespace siomq::net
