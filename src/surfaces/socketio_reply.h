// Requests and replies over a Socket.IO socket: an event is a Request, the socket (and the event's ack
// id) is its Reply.
//
// A SocketReply refers to the socket and must not outlive the handler's call; keep() asks the surface's
// `Keeper` for a reply that can (tyo-mq's goes through the socket's SocketEndpoint).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>

#include "net/socket.h"
#include "surfaces/reply.h"
#include "surfaces/request.h"

namespace siomq::surfaces {

// The Request of a Socket.IO event; views into `msg`.
Request request_of(const net::Message& msg);

class SocketReply final : public Reply {
 public:
  // Makes the reply that keep() returns: it sends to `socket` from any thread.
  using Keeper = std::shared_ptr<Reply> (*)(net::Socket& socket, std::optional<uint64_t> ack_id);

  SocketReply(net::Socket& socket, std::optional<uint64_t> ack_id, Keeper keeper)
      : socket_(socket), ack_id_(ack_id), keeper_(keeper) {}

  bool has_ack() const override { return ack_id_.has_value(); }
  void ack(std::string_view json_array) override;
  void emit(std::string_view event, std::string_view payload) override;
  bool open() const override { return socket_.connected(); }
  std::shared_ptr<Reply> keep() override { return keeper_(socket_, ack_id_); }

 private:
  net::Socket& socket_;
  std::optional<uint64_t> ack_id_;
  Keeper keeper_;
};

}  // namespace siomq::surfaces
