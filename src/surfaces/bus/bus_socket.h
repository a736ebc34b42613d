// A socket's bus state on namespace "/" (net::Socket::extension): its core subscriptions by sid, and
// its requests waiting for a reply. It is the BusSink its subscriptions deliver to: a copy becomes a
// `msg` event sent through the socket's SocketEndpoint (directly on its worker, else through the
// outbox), so any thread may deliver.
//
// Ownership: the socket holds its BusSocket; a realm's Sublist holds it while it has subscriptions
// there (they are removed when the socket disconnects). Threading: deliver() from any thread; every
// other member is touched only on the socket's worker.
#pragma once

#include <boost/asio/steady_timer.hpp>

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>

#include "broker/bus_message.h"
#include "broker/sublist.h"
#include "surfaces/bus/answer.h"

namespace siomq::surfaces {
class SocketEndpoint;
}

namespace siomq::surfaces::bus {

class BusSocket : public broker::BusSink, public std::enable_shared_from_this<BusSocket> {
 public:
  explicit BusSocket(std::shared_ptr<SocketEndpoint> endpoint) : endpoint_(std::move(endpoint)) {}
  void deliver(const broker::BusMessagePtr& message, std::string_view sid, bool last) override;
  const std::shared_ptr<SocketEndpoint>& endpoint() const { return endpoint_; }

  struct Sub {
    std::string realm;
    broker::Sublist::Id id = 0;
  };
  std::unordered_map<std::string, Sub> subs;  // by sid
  uint64_t next_sid = 1;

  // A request waiting for its reply on its inbox (§4 request): the first message wins, or the timer does.
  struct Waiter : broker::BusSink {
    Waiter(boost::asio::io_context& io, Answer a) : timer(io), answer(std::move(a)) {}
    void deliver(const broker::BusMessagePtr& message, std::string_view sid, bool last) override;
    boost::asio::steady_timer timer;
    Answer answer;
    std::atomic<bool> answered{false};
    std::string realm;
    broker::Sublist::Id inbox = 0;
    std::weak_ptr<BusSocket> owner;
  };
  std::unordered_map<broker::Sublist::Id, std::shared_ptr<Waiter>> waiting;  // by inbox subscription

 private:
  std::shared_ptr<SocketEndpoint> endpoint_;
};

}  // namespace siomq::surfaces::bus
