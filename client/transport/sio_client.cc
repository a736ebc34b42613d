#include "transport/sio_client.h"

namespace siomq::client {

SioClient::SioClient(boost::asio::io_context& io, ClientOptions options) : state_(std::make_shared<State>()) {
  state_->nsp = options.nsp;
  state_->auth = options.auth;
  std::weak_ptr<State> weak = state_;
  EngineSocket::Callbacks callbacks;
  callbacks.opened = [weak] {
    auto st = weak.lock();
    if (!st) return;
    if (auto socket = st->socket.lock()) socket->join(st->nsp, st->auth);
  };
  callbacks.joined = [weak](const std::string& nsp, std::optional<std::string> failure, const std::string& sid) {
    auto st = weak.lock();
    if (!st || nsp != st->nsp) return;
    if (failure) {
      if (auto socket = st->socket.lock()) socket->close();
      if (auto done = std::move(st->on_connected)) done("connect refused: " + *failure);
      return;
    }
    st->socket_id = sid;
    st->joined = true;
    if (auto done = std::move(st->on_connected)) done(std::nullopt);
  };
  callbacks.left = [weak](const std::string& nsp) {
    auto st = weak.lock();
    if (!st || nsp != st->nsp) return;
    if (auto socket = st->socket.lock()) socket->close();
  };
  callbacks.event = [weak](EngineSocket::Incoming&& in) {
    auto st = weak.lock();
    if (!st || in.nsp != st->nsp) return;
    auto it = st->handlers.find(in.event);
    if (it != st->handlers.end()) it->second(Incoming{std::move(in.event), std::move(in.json), std::move(in.attachments)});
  };
  callbacks.closed = [weak](std::string_view reason) {
    auto st = weak.lock();
    if (!st) return;
    st->joined = false;
    if (auto done = std::move(st->on_connected)) done(std::string(reason));
    if (auto handler = std::move(st->on_close)) handler(reason);
  };
  socket_ = std::make_shared<EngineSocket>(io, static_cast<TransportOptions&>(options), std::move(callbacks));
  state_->socket = socket_;
}

SioClient::~SioClient() = default;

void SioClient::connect(ConnectDone done) {
  state_->on_connected = std::move(done);
  socket_->open();
}

void SioClient::emit(std::string_view event, std::string_view args, Handler on_ack) {
  emit(event, args, {}, std::move(on_ack));
}

void SioClient::emit(std::string_view event, std::string_view args, std::vector<std::string> attachments, Handler on_ack) {
  EngineSocket::AckHandler handler;
  if (on_ack) {
    handler = [on_ack = std::move(on_ack)](EngineSocket::Incoming&& in) {
      on_ack(Incoming{{}, std::move(in.json), std::move(in.attachments)});
    };
  }
  socket_->emit(state_->nsp, event, args, std::move(attachments), std::move(handler));
}

void SioClient::on(std::string event, Handler handler) { state_->handlers[std::move(event)] = std::move(handler); }
void SioClient::on_close(std::function<void(std::string_view)> handler) { state_->on_close = std::move(handler); }
void SioClient::close() { socket_->close(); }

}  // namespace siomq::client
