#include "surfaces/bus/core.h"

#include <boost/asio/post.hpp>

#include "net/engine_server.h"
#include "net/worker_pool.h"
#include "surfaces/bus/answer.h"
#include "surfaces/bus/bus_socket.h"
#include "surfaces/bus/bus_stats.h"
#include "surfaces/bus/cluster_bus.h"
#include "surfaces/bus/core_requests.h"
#include "surfaces/bus/fields.h"
#include "surfaces/bus/tyo_bridge.h"
#include "surfaces/http/metrics.h"
#include "surfaces/tyo_mq/socket_endpoint.h"
#include "wire/bus_subject.h"
#include "wire/clock.h"
#include "wire/socketio.h"

namespace siomq::surfaces::bus {
namespace {

// Requests one socket may have waiting for replies at once.
constexpr size_t kMaxWaitingRequests = 1000;

std::shared_ptr<BusSocket> bus_socket_of(net::Socket& socket) {
  auto state = socket.extension<BusSocket>();
  if (!state) {
    state = std::make_shared<BusSocket>(endpoint_of(socket));
    socket.set_extension(state);
  }
  return state;
}

Answer answer_of(net::Socket& socket, const net::Message& msg) {
  return Answer(endpoint_of(socket), socket.nsp(), msg.ack_id);
}

broker::BusMessagePtr message_of(std::string subject, std::string data, std::string header, std::string reply) {
  auto m = std::make_shared<broker::BusMessage>();
  m->subject = std::move(subject);
  m->data = std::move(data);
  m->header = std::move(header);
  m->reply = std::move(reply);
  return m;
}

}  // namespace

std::optional<std::string> admit(BusContext& ctx, Session& session, Need need, size_t cost, const Answer& answer) {
  const auth::Snapshot& snap = ctx.tyo->settings.current();
  if (snap.auth.enabled) {
    if (!session.grant || session.grant->implicit) {
      answer.error(401, "unauthenticated: send AUTHENTICATION (or a CONNECT token) first");
      return std::nullopt;
    }
    const std::string& role = session.grant->role;
    if ((need == Need::subscribe && role == "producer") || (need == Need::publish && role == "consumer")) {
      answer.error(403, "forbidden: the role '" + role + "' may not " +
                            (need == Need::publish ? "publish" : "subscribe"));
      return std::nullopt;
    }
  }
  const std::string& realm = session.realm();
  const auth::LimitValues& l = snap.limits.for_realm(realm);
  if (l.messages_per_second > 0 || l.bytes_per_second > 0) {
    int64_t now = steady_ms();
    const char* reason = nullptr;
    if (session.messages.take(1, l.messages_per_second,
                              l.message_burst > 0 ? l.message_burst : 3 * l.messages_per_second, now)) {
      reason = "messages_per_second";
    } else if (session.bytes.take(static_cast<double>(cost), l.bytes_per_second,
                                  l.bytes_burst > 0 ? l.bytes_burst : 2 * l.bytes_per_second, now)) {
      reason = "bytes_per_second";
    }
    if (reason) {
      http::process_metrics().rate_limited(reason);
      answer.error(429, std::string("rate limited: ") + reason);
      return std::nullopt;
    }
  }
  return realm;
}

void capture_in_stream(BusContext& ctx, const std::string& realm, const broker::BusMessagePtr& message) {
  if (!ctx.streams) return;
  std::optional<std::string> msg_id;
  if (!message->header.empty()) (void)read_header(message->header, &msg_id);
  ctx.streams->capture(realm, message, msg_id && msg_id->size() <= kMaxMsgIdBytes ? std::move(*msg_id) : "");
}

size_t route_core(BusContext& ctx, const std::string& realm, const broker::BusMessagePtr& message, bool* bound) {
  std::vector<broker::Sublist::Copy> targets;
  // In a cluster the other nodes' queue groups take their turns too (cluster_bus.h).
  auto remote = remote_bus(ctx);
  std::vector<broker::QueuePick> picks;
  broker::BusScope scope = publish_scope(ctx, realm, remote.get(), picks);
  size_t copies = ctx.tyo->broker.with_realm(realm, [&](broker::RealmRegistry& r) {
    if (bound) *bound = r.stream_bound(message->subject);
    return r.bus().route(message->subject, targets, scope);
  });
  broker::deliver(targets, message);
  if (!remote) return copies;
  Relayed relayed = relay_published(ctx, realm, message, remote.get(), std::move(picks));
  return copies + give_back_turns(ctx, realm, message, relayed.unsent);
}

size_t publish_core(BusContext& ctx, const std::string& realm, const broker::BusMessagePtr& message, bool from_tyo) {
  bus_stats().count_in(message->data.size());
  bool bound = false;
  size_t copies = route_core(ctx, realm, message, &bound);
  // A stream binding the subject stores it too (§8.8), deduplicated by its Msg-Id header as a stream.pub
  // would be (§8.9); the core subscribers have their copies already.
  if (bound) capture_in_stream(ctx, realm, message);
  if (!from_tyo && !ctx.options.tyo_bridge_realms.empty() && message->subject.starts_with(kTyoPrefix))
    bridge_to_tyo(ctx, realm, *message);
  return copies;
}

void on_pub(BusContext& ctx, net::Socket& socket, const net::Message& msg) {
  Answer answer = answer_of(socket, msg);
  auto req = parse_pub(msg.json, msg.attachments);
  if (!req) return answer.error(req.error());
  auto realm = admit(ctx, *endpoint_of(socket), Need::publish, msg.json.size() + req->data.size(), answer);
  if (!realm) return;
  if (siomq::bus::is_system(req->subject)) return answer.error(403, "subject: $SYS. subjects are the server's");
  publish_core(ctx, *realm, message_of(std::move(req->subject), std::move(req->data), std::move(req->header),
                                       std::move(req->reply)));
  answer.ok();
}

void on_sub(BusContext& ctx, net::Socket& socket, const net::Message& msg) {
  Answer answer = answer_of(socket, msg);
  auto req = parse_sub(msg.json);
  if (!req) return answer.error(req.error());
  auto endpoint = endpoint_of(socket);
  auto realm = admit(ctx, *endpoint, Need::subscribe, msg.json.size(), answer);
  if (!realm) return;
  auto state = bus_socket_of(socket);
  const auth::Snapshot& snap = ctx.tyo->settings.current();
  const auth::LimitValues& l = snap.limits.for_realm(*realm);
  if (l.max_subscriptions_per_socket > 0 &&
      static_cast<double>(state->subs.size() + state->waiting.size()) >= l.max_subscriptions_per_socket) {
    http::process_metrics().rate_limited("max_subscriptions_per_socket");
    return answer.error(429, "too many subscriptions on this connection (limits.max_subscriptions_per_socket)");
  }
  if (snap.limits.server.max_subscriptions_total > 0 &&
      static_cast<double>(ctx.tyo->broker.subscriptions_total()) >= snap.limits.server.max_subscriptions_total) {
    http::process_metrics().rate_limited("max_subscriptions_total");
    return answer.error(429, "too many subscriptions on this server (limits.max_subscriptions_total)");
  }
  std::string sid = std::to_string(state->next_sid++);
  bool full = false;
  broker::Sublist::Id id = ctx.tyo->broker.with_realm(*realm, [&](broker::RealmRegistry& r) -> broker::Sublist::Id {
    if (l.max_subscriptions_per_realm > 0 &&
        static_cast<double>(r.subscription_count()) >= l.max_subscriptions_per_realm) {
      full = true;
      return 0;
    }
    return r.bus().add(req->subject, req->queue, state, sid);
  });
  if (full) {
    http::process_metrics().rate_limited("max_subscriptions_per_realm");
    return answer.error(429, "too many subscriptions in this realm (limits.max_subscriptions_per_realm)");
  }
  state->subs.emplace(sid, BusSocket::Sub{*realm, id});
  if (ctx.streams) ctx.streams->interest_changed(*realm, req->subject);  // a push consumer may have waited for it
  std::string fields = "\"sid\":";
  sio::append_json_string(fields, sid);
  answer.ok(fields);
}

void on_unsub(BusContext& ctx, net::Socket& socket, const net::Message& msg) {
  Answer answer = answer_of(socket, msg);
  auto req = parse_unsub(msg.json);
  if (!req) return answer.error(req.error());
  auto realm = admit(ctx, *endpoint_of(socket), Need::any, msg.json.size(), answer);
  if (!realm) return;
  auto state = bus_socket_of(socket);
  auto it = state->subs.find(req->sid);
  if (it == state->subs.end()) return answer.error(404, "sid: no such subscription on this socket");
  BusSocket::Sub sub = it->second;
  bool found = false;
  bool gone = !req->max || *req->max == 0;
  ctx.tyo->broker.if_realm(sub.realm, [&](broker::RealmRegistry& r) {
    found = gone ? r.bus().remove(sub.id) : r.bus().set_max(sub.id, *req->max);
  });
  if (gone || !found) state->subs.erase(it);
  if (!found) return answer.error(404, "sid: no such subscription on this socket");
  answer.ok();
}

void on_request(BusContext& ctx, net::Socket& socket, const net::Message& msg) {
  Answer answer = answer_of(socket, msg);
  auto req = parse_request(msg.json, msg.attachments);
  if (!req) return answer.error(req.error());
  auto endpoint = endpoint_of(socket);
  auto realm = admit(ctx, *endpoint, Need::publish, msg.json.size() + req->data.size(), answer);
  if (!realm) return;
  if (siomq::bus::is_system(req->subject)) return answer.error(403, "subject: $SYS. subjects are the server's");
  auto state = bus_socket_of(socket);
  // An inbox is a subscription: it counts against the socket's cap with its other subscriptions.
  const auth::LimitValues& l = ctx.tyo->settings.current().limits.for_realm(*realm);
  if (state->waiting.size() >= kMaxWaitingRequests ||
      (l.max_subscriptions_per_socket > 0 &&
       static_cast<double>(state->subs.size() + state->waiting.size()) >= l.max_subscriptions_per_socket))
    return answer.error(429, "too many requests waiting for a reply on this connection");
  auto waiter = std::make_shared<BusSocket::Waiter>(endpoint->worker().io(), answer);
  waiter->realm = *realm;
  waiter->owner = state;
  std::string inbox = new_inbox(ctx);
  auto message = message_of(std::move(req->subject), std::move(req->data), std::move(req->header), inbox);
  bus_stats().count_in(message->data.size());
  // The inbox is subscribed before the request goes out, under the same lock, so that no reply can come
  // before it; with nobody to answer, here or on another node, the inbox goes again at once (503, §8.4).
  // The inbox is not shared with the other nodes: a reply there comes back by the relay's reply route.
  std::vector<broker::Sublist::Copy> targets;
  auto remote = remote_bus(ctx);
  std::vector<broker::QueuePick> picks;
  broker::BusScope scope = publish_scope(ctx, *realm, remote.get(), picks);
  bool elsewhere = false;
  bool responders = ctx.tyo->broker.with_realm(*realm, [&](broker::RealmRegistry& r) {
    elsewhere = remote && remote->any(*realm, message->subject);
    if (!elsewhere && !r.bus().has_interest(message->subject)) return false;
    waiter->inbox = r.bus().add(inbox, {}, waiter, "inbox", /*shared=*/false);
    r.bus().set_max(waiter->inbox, 1);
    r.bus().route(message->subject, targets, scope);
    return true;
  });
  if (!responders) return answer.error(503, "no responders");
  broker::deliver(targets, message);
  if (elsewhere) {
    Relayed relayed = relay_published(ctx, *realm, message, remote.get(), std::move(picks));
    size_t back = give_back_turns(ctx, *realm, message, relayed.unsent);
    if ((!relayed.sent || !relayed.any) && back == 0 && targets.empty() && !waiter->answered.exchange(true)) {
      // Only other nodes could answer, and the relay cannot reach them now (or the directory changed
      // under the request: nobody matched after all).
      ctx.tyo->broker.if_realm(*realm, [&](broker::RealmRegistry& r) { r.bus().remove(waiter->inbox); });
      return answer.error(503, "no responders");
    }
  }
  if (waiter->answered) return;  // answered by a responder on this very thread, under the lock
  state->waiting.emplace(waiter->inbox, waiter);
  waiter->timer.expires_after(std::chrono::milliseconds(req->timeout_ms));
  waiter->timer.async_wait([ctx = ctx.shared_from_this(), weak = std::weak_ptr<BusSocket::Waiter>(waiter), owner = waiter->owner](
                               const boost::system::error_code& ec) {
    auto w = weak.lock();
    if (ec || !w || w->answered.exchange(true)) return;
    ctx->tyo->broker.if_realm(w->realm, [&](broker::RealmRegistry& r) { r.bus().remove(w->inbox); });
    if (auto self = owner.lock()) self->waiting.erase(w->inbox);
    w->answer.error(408, "timeout");
  });
}

void on_bus_disconnect(BusContext& ctx, net::Socket& socket) {
  auto state = socket.extension<BusSocket>();
  if (!state) return;
  // (Loop variables, not structured bindings: clang 14 cannot capture those in a lambda.)
  for (const auto& entry : state->subs) {
    const BusSocket::Sub& sub = entry.second;
    ctx.tyo->broker.if_realm(sub.realm, [&](broker::RealmRegistry& r) { r.bus().remove(sub.id); });
  }
  state->subs.clear();
  for (const auto& entry : state->waiting) {
    const auto& w = entry.second;
    w->answered = true;
    w->timer.cancel();
    ctx.tyo->broker.if_realm(w->realm, [&](broker::RealmRegistry& r) { r.bus().remove(entry.first); });
  }
  state->waiting.clear();
}

}  // namespace siomq::surfaces::bus
