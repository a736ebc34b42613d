#include "surfaces/tyo_mq/socket_endpoint.h"

#include <boost/asio/post.hpp>

#include "net/engine_session.h"
#include "net/worker_pool.h"

namespace siomq::surfaces {

SocketEndpoint::SocketEndpoint(net::Socket& socket)
    : worker_(socket.session().worker()), socket_(socket.weak_from_this()), id_(socket.id()) {}

SocketEndpoint::~SocketEndpoint() {
  // Receipts still in the outbox are answered: the durable queues wait for every one they asked for.
  std::unique_ptr<Outbox> box(outbox_.load(std::memory_order_acquire));
  if (!box) return;
  for (auto& item : box->items) {
    if (item.receipt) item.receipt(false);
  }
}

SocketEndpoint::Outbox& SocketEndpoint::outbox() {
  Outbox* box = outbox_.load(std::memory_order_acquire);
  if (box) return *box;
  auto fresh = std::make_unique<Outbox>();
  // Two threads may hand off the first items at once: one box is kept, the other thread uses it.
  if (outbox_.compare_exchange_strong(box, fresh.get(), std::memory_order_acq_rel)) return *fresh.release();
  return *box;
}

void SocketEndpoint::notify(std::string_view event, std::string_view payload) { send(event_frames(event, payload)); }

void SocketEndpoint::deliver(const broker::Delivery& delivery) {
  // The first tyo-mq socket a fan-out reaches encodes the copy; the others reuse its frames.
  auto encoded = std::dynamic_pointer_cast<const TyoMqEncoding>(delivery.encoding);
  if (!encoded) {
    encoded = encode_delivery(delivery);
    delivery.encoding = encoded;
  }
  for (const auto& frames : encoded->frames) send(frames);
}

void SocketEndpoint::notify(const broker::Presence& presence) {
  auto [event, payload] = presence_event(presence);
  send(event_frames(event, payload));
}

void SocketEndpoint::send(FramesPtr frames) {
  if (worker_.is_current()) {
    if (auto s = socket_.lock()) s->send_frames(*frames);
    return;
  }
  post_outgoing({std::move(frames), {}, {}, 0});
}

void SocketEndpoint::send_text(std::string text) {
  if (worker_.is_current()) {
    net::OutFrame frame = net::text_frame(std::move(text));
    if (auto s = socket_.lock()) s->send_frames({&frame, 1});
    return;
  }
  post_outgoing({nullptr, std::move(text), {}, net::read_stamp()});
}

void SocketEndpoint::when_sent(net::SentReceipt done) {
  if (!done) return;  // (an Outgoing without frames or receipt is a text frame)
  if (worker_.is_current()) {
    if (auto s = socket_.lock()) return s->when_sent(std::move(done));
    return done(false);
  }
  post_outgoing({nullptr, {}, std::move(done), 0});
}

void SocketEndpoint::post_outgoing(Outgoing item) {
  Outbox& box = outbox();
  bool first;
  {
    std::lock_guard lock(box.mu);
    first = box.items.empty();
    box.items.push_back(std::move(item));
  }
  if (first) {
    boost::asio::post(worker_.io(), [weak = weak_from_this()] {
      if (auto self = weak.lock()) self->drain_outbox();
    });
  }
}

void SocketEndpoint::drain_outbox() {
  std::vector<Outgoing> batch;
  {
    Outbox& box = outbox();
    std::lock_guard lock(box.mu);
    batch.swap(box.items);
  }
  auto s = socket_.lock();
  for (auto& item : batch) {
    if (item.frames) {
      if (s) s->send_frames(*item.frames);
    } else if (!item.receipt) {
      net::OutFrame frame = net::text_frame(std::move(item.text));
      frame.read_us = item.read_us;
      if (s) s->send_frames({&frame, 1});
    } else if (s) {
      s->when_sent(std::move(item.receipt));
    } else {
      item.receipt(false);
    }
  }
}

void SocketEndpoint::close() {
  boost::asio::post(worker_.io(), [socket = socket_] {
    if (auto s = socket.lock(); s && s->connected()) s->disconnect(true);
  });
}

void SocketEndpoint::close_now() {
  if (auto s = socket_.lock()) s->disconnect(true);
}

std::shared_ptr<SocketEndpoint> endpoint_of(net::Socket& socket) {
  auto e = socket.state<SocketEndpoint>();
  if (!e) {
    e = std::make_shared<SocketEndpoint>(socket);
    socket.set_state(e);
  }
  return e;
}

}  // namespace siomq::surfaces
