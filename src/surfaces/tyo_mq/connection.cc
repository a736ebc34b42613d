#include "surfaces/tyo_mq/connection.h"

#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>

#include <memory>
#include <string>
#include <vector>

#include "broker/broker.h"
#include "broker/durable_queues.h"
#include "net/worker_pool.h"
#include "surfaces/client_address.h"
#include "surfaces/tyo_mq/registration.h"
#include "surfaces/gate.h"
#include "surfaces/http/metrics.h"
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
  http::process_metrics().connection_opened();
  endpoint->ip = client_address(socket.remote_address(), socket.forwarded_for(), snap.limits.trust_proxy);
  if (!snap.auth.enabled) endpoint->grant = auth::Grant{"default", "both", true};
  auto [open, last_minute] = ctx.sessions.add(endpoint, steady_ms());
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
  release_claimed_names(ctx, *endpoint);
  // Every name it bound goes offline, in every realm it used.
  for (const auto& realm : endpoint->holdings().realms) {
    std::vector<broker::Notice> notices;
    ctx.broker.if_realm(realm, [&](broker::RealmRegistry& r) { notices = r.disconnect(endpoint); });
    send_notices(notices);
  }
  // Its ACK timers stop; what it had in flight stays stored for the next replay (§4.7).
  ctx.queues.socket_closed(socket.id());
}

}  // namespace siomq::surfaces
