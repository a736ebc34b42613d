#include "surfaces/http/sse_stream.h"

#include <boost/asio/post.hpp>
#include <boost/beast/http/field.hpp>

#include <atomic>

#include "auth/hmac.h"
#include "net/worker_pool.h"
#include "surfaces/http/sse_frame.h"
#include "surfaces/tyo_mq/answers.h"

namespace siomq::surfaces::http {
namespace {
std::atomic<uint64_t> next_stream{1};
namespace bh = boost::beast::http;
}  // namespace

SseStream::SseStream(const std::shared_ptr<net::HttpConnection>& conn, std::string realm, std::string event,
                     SseStreamOptions options)
    : worker_(conn->worker()), conn_(conn),
      id_("sse-" + std::to_string(next_stream.fetch_add(1, std::memory_order_relaxed))), realm_(std::move(realm)),
      event_(std::move(event)), consumer_("__http_sse__:" + id_), options_(options), timer_(conn->worker().io()) {}

void SseStream::open(const net::HttpRequest& request, broker::Broker& broker, SseHistory& history,
                     const std::optional<std::string>& since, std::function<void()> on_end) {
  auto conn = conn_.lock();
  if (!conn) return on_end();
  net::HttpResponse head{bh::status::ok, request.version()};
  head.set(bh::field::content_type, "text/event-stream");
  head.set(bh::field::cache_control, "no-cache");
  head.set(bh::field::connection, "keep-alive");
  head.set("x-accel-buffering", "no");
  open_ = true;
  conn->stream_open(std::move(head), options_.max_pending_bytes,
                    [self = shared_from_this(), &broker, on_end = std::move(on_end)] {
                      self->ended(broker);
                      on_end();
                    });
  conn->stream_write(": ok\n\n");
  // Subscribed before the history is read: a message recorded after the read comes live, one recorded
  // before comes from the replay, one in both is sent once (replayed_).
  broker::SubscribeSpec spec;
  spec.event = event_;
  spec.producer = broker::kAnyProducer;
  spec.consumer = consumer_;
  spec.id = id_;
  spec.consumer_id = consumer_;
  auto self = shared_from_this();
  broker.with_realm(realm_, [&](broker::RealmRegistry& r) {
    r.register_consumer(consumer_, id_, self);
    key_ = r.subscribe(spec, self).first;
  });
  if (since) {
    Replay replay = history.after(realm_, event_, *since);
    if (replay.truncated) conn->stream_write(": catch-up truncated (replay capped)\n\n");
    for (auto& [id, frame] : replay.frames) {
      replayed_.insert(id);
      conn->stream_write(frame);
    }
  }
  keep_alive();
}

void SseStream::keep_alive() {
  timer_.expires_after(options_.keep_alive);
  timer_.async_wait([weak = weak_from_this()](const boost::system::error_code& ec) {
    auto self = weak.lock();
    if (ec || !self || !self->open_) return;
    auto conn = self->conn_.lock();
    if (!conn || !conn->stream_write(": keep-alive\n\n")) return;
    self->keep_alive();
  });
}

void SseStream::ended(broker::Broker& broker) {
  if (!open_) return;
  open_ = false;
  timer_.cancel();
  auto self = shared_from_this();
  std::vector<broker::Notice> notices;
  // The subscription goes first: an offline consumer's non-durable subscription would still have
  // guaranteed copies stored for it.
  broker.if_realm(realm_, [&](broker::RealmRegistry& r) {
    r.unsubscribe(key_, consumer_);
    notices = r.disconnect(self);
    r.forget_consumer(consumer_);
  });
  send_notices(notices);
}

namespace {
// A copy's SSE form, made by the first stream a fan-out reaches and reused by the others (one parse per
// message, not per stream), unless another surface's encoding is already there.
struct SseEncoding : broker::DeliveryEncoding {
  std::optional<std::string> event;
  std::string id;
  std::optional<std::string> frame;
};
std::shared_ptr<const SseEncoding> encode(std::string_view delivery_id, std::string_view payload) {
  auto e = std::make_shared<SseEncoding>();
  e->event = delivery_event(payload);
  e->id = frame_safe_id(delivery_id) ? std::string(delivery_id) : "m-" + auth::random_hex(12);
  if (e->event) e->frame = sse_frame(e->id, payload);
  return e;
}
}  // namespace

void SseStream::deliver(const broker::Delivery& delivery) {
  // A realm broadcast (§4.6) reaches every bound endpoint under four keys: a stream takes the one named
  // by the event itself, so it sees the broadcast once.
  if (delivery.whole && delivery.key != event_) return;
  auto enc = std::dynamic_pointer_cast<const SseEncoding>(delivery.encoding);
  if (!enc) {
    enc = encode(delivery.delivery_id, delivery.payload);
    if (!delivery.encoding) delivery.encoding = enc;
  }
  if (!enc->event || *enc->event != event_ || !enc->frame) return;
  boost::asio::post(worker_.io(), [self = shared_from_this(), enc] { self->write(enc->id, *enc->frame); });
}

void SseStream::write(const std::string& id, const std::string& frame) {
  if (!open_ || replayed_.count(id)) return;
  if (auto conn = conn_.lock()) conn->stream_write(frame);
}

void SseStream::when_sent(std::function<void(bool sent)> done) {
  boost::asio::post(worker_.io(), [self = shared_from_this(), done = std::move(done)] { done(self->open_); });
}

void SseStream::close() {
  boost::asio::post(worker_.io(), [self = shared_from_this()] {
    if (auto conn = self->conn_.lock()) conn->stream_close();
  });
}

}  // namespace siomq::surfaces::http
