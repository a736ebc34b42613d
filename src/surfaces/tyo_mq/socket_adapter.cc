#include "surfaces/tyo_mq/socket_adapter.h"

#include <utility>

namespace siomq::surfaces {
namespace {

// A reply sent through the socket's endpoint: from any thread, in order with the endpoint's deliveries.
class EndpointReply final : public Reply {
 public:
  EndpointReply(std::shared_ptr<SocketEndpoint> endpoint, std::weak_ptr<net::Socket> socket, std::optional<uint64_t> ack_id)
      : endpoint_(std::move(endpoint)), socket_(std::move(socket)), ack_id_(ack_id) {}

  bool has_ack() const override { return ack_id_.has_value(); }
  void ack(std::string_view json_array) override {
    if (ack_id_) endpoint_->send(ack_frames(*ack_id_, json_array));
  }
  void emit(std::string_view event, std::string_view payload) override { endpoint_->send(event_frames(event, payload)); }
  bool open() const override {
    auto s = socket_.lock();
    return s && s->connected();
  }
  std::shared_ptr<Reply> keep() override { return std::make_shared<EndpointReply>(endpoint_, socket_, ack_id_); }

 private:
  std::shared_ptr<SocketEndpoint> endpoint_;
  std::weak_ptr<net::Socket> socket_;
  std::optional<uint64_t> ack_id_;
};

}  // namespace

std::shared_ptr<Reply> keep_socket_reply(net::Socket& socket, std::optional<uint64_t> ack_id) {
  return std::make_shared<EndpointReply>(endpoint_of(socket), socket.weak_from_this(), ack_id);
}

std::function<void(net::Socket&, const net::Message&)> socket_handler(std::shared_ptr<Context> ctx, RequestHandler handler) {
  return [ctx = std::move(ctx), handler](net::Socket& socket, const net::Message& msg) {
    auto endpoint = endpoint_of(socket);
    SocketReply reply(socket, msg.ack_id, keep_socket_reply);
    handler(*ctx, *endpoint, request_of(msg), reply);
  };
}

bool within_credential_rate(Context& ctx, net::Socket& socket, const net::Message& msg) {
  auto endpoint = endpoint_of(socket);
  SocketReply reply(socket, msg.ack_id, keep_socket_reply);
  return within_credential_rate(ctx.settings.current(), *endpoint, reply, steady_ms());
}

}  // namespace siomq::surfaces
