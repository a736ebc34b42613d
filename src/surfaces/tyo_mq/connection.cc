#include "surfaces/tyo_mq/connection.h"

#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>

#include <memory>
#include <string>
#include <vector>

#include "broker/broker.h"
#include "broker/durable_queues.h"
#include "net/worker_pool.h"
#include "surfaces/gate.h"
#include "surfaces/socketio_reply.h"
#include "surfaces/tyo_mq/answers.h"
#include "surfaces/tyo_mq/socket_adapter.h"
#include "surfaces/tyo_mq/socket_endpoint.h"
#include "wire/clock.h"

namespace siomq::surfaces {

// RATE_LIMITED (§11.1), then the connection closes 100 ms later.
void on_connect(Context& ctx, net::Socket& socket) {
  const auth::Snapshot& snap = ctx.settings.current();
  auto endpoint = endpoint_of(socket);
  std::string ip = socket.remote_address();
  if (snap.limits.trust_proxy && !socket.forwarded_for().empty()) {
    // The last hop is the one the trusted proxy appended (the address it saw); every hop before it is
    // whatever the client wrote, so counting by the first would let a client pick its own address.
    std::string_view last = socket.forwarded_for();
    if (size_t comma = last.rfind(','); comma != std::string_view::npos) last.remove_prefix(comma + 1);
    while (!last.empty() && last.front() == ' ') last.remove_prefix(1);
    while (!last.empty() && last.back() == ' ') last.remove_suffix(1);
    bool address = !last.empty() && last.size() <= 45 &&
                   last.find_first_not_of("0123456789abcdefABCDEF.:") == std::string_view::npos;
    if (address) ip = std::string(last);
  }
  endpoint->ip = ip;
  if (!snap.auth.enabled) endpoint->grant = auth::Grant{"default", "both", true};
  auto [open, last_minute] = ctx.sessions.add(endpoint, ip, steady_ms());
  const auth::LimitValues& l = snap.limits.for_realm("default");
  const char* reason = nullptr;
  int64_t retry_after = 0;
  if (l.max_connections_per_ip > 0 && static_cast<double>(open) > l.max_connections_per_ip) {
    reason = "max_connections_per_ip";
    retry_after = 30;
  } else if (l.connections_per_minute_per_ip > 0 && static_cast<double>(last_minute) > l.connections_per_minute_per_ip) {
    reason = "connections_per_minute_per_ip";
    retry_after = 60;
  }
  if (!reason) return;
  // After the CONNECT answer: the client hears why, then the connection closes.
  boost::asio::post(endpoint->worker().io(), [weak = socket.weak_from_this(), endpoint, reason, retry_after] {
    auto s = weak.lock();
    if (!s || !s->connected()) return;
    SocketReply reply(*s, std::nullopt, keep_socket_reply);
    rate_limited(*endpoint, reply, reason, retry_after, steady_ms());
    auto timer = std::make_shared<boost::asio::steady_timer>(endpoint->worker().io(), std::chrono::milliseconds(100));
    timer->async_wait([timer, weak](const boost::system::error_code&) {
      if (auto s = weak.lock(); s && s->connected()) s->disconnect(true);
    });
  });
}

void on_disconnect(Context& ctx, net::Socket& socket) {
  auto endpoint = socket.state<SocketEndpoint>();
  if (!endpoint) return;
  ctx.sessions.remove(endpoint.get());
  // Every name it bound goes offline, in every realm it used.
  for (const auto& realm : endpoint->realms) {
    std::vector<broker::Notice> notices;
    ctx.broker.if_realm(realm, [&](broker::RealmRegistry& r) { notices = r.disconnect(endpoint); });
    send_notices(notices);
  }
  // Its ACK timers stop; what it had in flight stays stored for the next replay (§4.7).
  ctx.queues.socket_closed(socket.id());
}

}  // namespace siomq::surfaces
