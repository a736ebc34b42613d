#include "surfaces/bus/bus_socket.h"

#include <boost/asio/post.hpp>

#include "net/worker_pool.h"
#include "surfaces/bus/bus_stats.h"
#include "surfaces/tyo_mq/socket_endpoint.h"

namespace siomq::surfaces::bus {

BusStats& bus_stats() {
  static BusStats stats;
  return stats;
}

void BusSocket::deliver(const broker::BusMessagePtr& message, std::string_view sid, bool last) {
  bus_stats().count_out(message->data.size());
  endpoint_->send(msg_frames(message, sid));
  if (!last) return;
  // The subscription's max is reached and the sublist dropped it: forget its sid on the worker.
  boost::asio::post(endpoint_->worker().io(), [weak = weak_from_this(), sid = std::string(sid)] {
    if (auto self = weak.lock()) self->subs.erase(sid);
  });
}

void BusSocket::Waiter::deliver(const broker::BusMessagePtr& message, std::string_view, bool) {
  if (answered.exchange(true)) return;
  bus_stats().count_out(message->data.size());
  std::string fields = "\"msg\":";
  append_message(fields, *message, 0);
  answer.ok(fields, {data_of(message)});
  // The inbox subscription had max 1: the sublist has dropped it. The timer and the entry go on the worker.
  boost::asio::post(timer.get_executor(), [owner = owner, inbox = inbox] {
    auto self = owner.lock();
    if (!self) return;
    auto it = self->waiting.find(inbox);
    if (it == self->waiting.end()) return;
    it->second->timer.cancel();
    self->waiting.erase(it);
  });
}

}  // namespace siomq::surfaces::bus
