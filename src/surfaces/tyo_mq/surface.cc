#include "surfaces/tyo_mq/surface.h"

#include <boost/asio/post.hpp>
#include <spdlog/spdlog.h>

#include <openssl/rand.h>

#include <map>

#include "broker/broker.h"
#include "broker/durable_queues.h"
#include "net/engine_session.h"
#include "net/sio_server.h"
#include "net/worker_pool.h"
#include "surfaces/tyo_mq/ping.h"
#include "surfaces/tyo_mq/auth.h"
#include "surfaces/tyo_mq/context.h"
#include "surfaces/tyo_mq/frames.h"
#include "surfaces/tyo_mq/socket_adapter.h"
#include "surfaces/tyo_mq/housekeeping.h"
#include "surfaces/tyo_mq/management.h"
#include "surfaces/tyo_mq/socket_endpoint.h"
#include "surfaces/tyo_mq/requests.h"
#include "surfaces/tyo_mq/stored_subscription.h"
#include "wire/engineio.h"
#include "wire/js_json.h"
#include "wire/json_spans.h"
#include "wire/socketio.h"
#include "wire/log_text.h"

namespace siomq::surfaces {
namespace {

void send_notices(const std::vector<broker::Notice>& notices) {
  for (const auto& n : notices) {
    if (n.to) n.to->notify(n.presence);
  }
}

// ERROR to the socket (§0 row 1), and {ok:false, code:400, message} to its ack callback if it asked.
void reply_error(net::Socket& socket, const net::Message& msg, const Error& error) {
  if (error.code == kBareStringError) {
    std::string bare;
    sio::append_json_string(bare, error.message);
    socket.emit("ERROR", bare);  // the reference sends this one as a bare string
  } else {
    socket.emit("ERROR", error_object(error.code, error.message));
  }
  if (msg.ack_id) socket.ack(*msg.ack_id, "[" + error_reply(400, error.message) + "]");
}

// The request object of an event, or the error already sent.
std::optional<std::string_view> request(net::Socket& socket, const net::Message& msg, std::string& storage) {
  auto r = request_object(msg.json, storage);
  if (!r) {
    reply_error(socket, msg, Error{r.error().code, std::string(msg.event) + ": " + r.error().message});
    return std::nullopt;
  }
  return *r;
}

struct NamedRegistration {
  std::string name;
  std::string id;
  std::optional<int64_t> default_ttl_ms;  // -1: the producer's messages never expire
};

// A registration's name and id (§3.1, §3.2): name must be a string; id defaults to the socket id.
std::optional<NamedRegistration> registration(net::Socket& socket, const net::Message& msg, std::string_view what) {
  std::string storage;
  auto object = request(socket, msg, storage);
  if (!object) return std::nullopt;
  auto reg = parse_registration(*object);
  if (!reg.name) {
    reply_error(socket, msg, Error{-1, "Incorrect " + std::string(what) + "'s name"});
    return std::nullopt;
  }
  NamedRegistration out{std::move(*reg.name), reg.id.value_or(socket.id()), std::nullopt};
  Ttl ttl = parse_ttl(reg.default_ttl);
  if (ttl.kind == Ttl::Kind::never) out.default_ttl_ms = -1;
  if (ttl.kind == Ttl::Kind::ms) out.default_ttl_ms = ttl.ms;
  return out;
}

// The delivery object of §4.2: {event, message, from, [enc], [to], [content_type]}, message spliced raw.
std::string delivery_payload(const ProduceRequest& p) {
  std::string out;
  out.reserve(32 + p.event.size() + p.message.size() + p.from.size() + p.enc.size() + p.to.size());
  out += "{\"event\":";
  sio::append_json_string(out, p.event);
  if (!p.message.empty()) {
    out += ",\"message\":";
    out += p.message;
  }
  out += ",\"from\":";
  sio::append_json_string(out, p.from);
  if (!p.enc.empty()) out += ",\"enc\":" + std::string(p.enc);
  if (!p.to.empty()) out += ",\"to\":" + std::string(p.to);
  if (p.content_type) {
    out += ",\"content_type\":";
    sio::append_json_string(out, *p.content_type);
  }
  out.push_back('}');
  return out;
}

// Broadcast (§4.6) in `realm`: never stored, never mirrored to "*".
void broadcast(broker::Broker& broker, const std::string& realm, const ProduceRequest& p, const std::string& payload,
               const std::vector<std::string>& attachments) {
  if (p.broadcast_scope == "group" && p.group) {
    auto routes = broker.with_realm(realm, [&](broker::RealmRegistry& r) { return r.group_members(*p.group); });
    for (const auto& r : routes) r.endpoint->deliver(broker::Delivery(r.key, payload, attachments));
    return;
  }
  // The realm's four events (the reference's misnamed fifth, <p>-TM-ALL-CONSUME, is not sent: §0 row 12).
  auto members = broker.with_realm(realm, [&](broker::RealmRegistry& r) { return r.members(); });
  const std::string keys[] = {p.event, broker::subscription_key(p.from, p.event), "tyo-mq-all-" + broker::lower(p.event),
                              broker::lower(p.from) + std::string(broker::kAllEventsSuffix)};
  std::vector<broker::Delivery> deliveries;
  for (const std::string& key : keys)
    deliveries.emplace_back(key, payload, attachments).whole = true;
  for (const auto& m : members) {
    for (const auto& d : deliveries) m->deliver(d);
  }
}

// The publisher confirm of a PRODUCE sent with an ack id: {ok:true, stored:N} once its stored copies
// are written, {ok:false, code, message} if they could not be.
std::string confirm_reply(size_t stored, const Status& status) {
  if (status) return "[{\"ok\":true,\"stored\":" + std::to_string(stored) + "}]";
  return "[" + error_reply(status.error().code ? status.error().code : 500, status.error().message) + "]";
}

// §11.1's message and byte buckets for one PRODUCE or PRODUCE_CHUNK of `cost` bytes; false when it is
// dropped (RATE_LIMITED, and the ack callback, if any, gets {ok:false, code:429}).
bool within_rate(const auth::Snapshot& snap, net::Socket& socket, SocketEndpoint& endpoint, const net::Message& msg,
                 size_t cost) {
  const auth::LimitValues& l = snap.limits.for_realm(endpoint.realm());
  if (l.messages_per_second <= 0 && l.bytes_per_second <= 0) return true;
  int64_t now = steady_ms();
  const char* reason = nullptr;
  int64_t wait = endpoint.messages.take(1, l.messages_per_second,
                                        l.message_burst > 0 ? l.message_burst : 3 * l.messages_per_second, now);
  if (wait) reason = "messages_per_second";
  if (!wait) {
    wait = endpoint.bytes.take(static_cast<double>(cost), l.bytes_per_second,
                               l.bytes_burst > 0 ? l.bytes_burst : 2 * l.bytes_per_second, now);
    if (wait) reason = "bytes_per_second";
  }
  if (!wait) return true;
  rate_limited(socket, endpoint, reason, wait);
  if (msg.ack_id) socket.ack(*msg.ack_id, "[" + error_reply(429, std::string("rate limited: ") + reason) + "]");
  return false;
}

// How many names the socket's realm may hold for a PRODUCE's `from` to be bound as a new one: none once
// the socket or the server is at its cap on names, else the realm's cap. Names made by PRODUCE count
// like those made by PRODUCER, so a stream of fresh `from` names cannot grow a realm without bound.
size_t name_room(Context& ctx, const auth::Snapshot& snap, const SocketEndpoint& endpoint) {
  const auth::LimitValues& l = snap.limits.for_realm(endpoint.realm());
  const double server_cap = snap.limits.server.max_registrations_total;
  if (l.max_registrations_per_socket > 0 && static_cast<double>(endpoint.registrations.size()) >= l.max_registrations_per_socket)
    return 0;
  if (server_cap > 0 && static_cast<double>(ctx.broker.names_total()) >= server_cap) return 0;
  return l.max_registrations_per_realm > 0 ? static_cast<size_t>(l.max_registrations_per_realm) : SIZE_MAX;
}

// PRODUCE (§3.5) of a request object; `attachments` are the packet's binary attachments. Each routed
// copy is sent live or stored, as §5.1's table says.
void produce(Context& ctx, const auth::Snapshot& snap, net::Socket& socket, const std::shared_ptr<SocketEndpoint>& self,
             const net::Message& msg, std::string_view object, const std::vector<std::string>& attachments) {
  SocketEndpoint& endpoint = *self;
  auto p = parse_produce(object);
  if (!p) return reply_error(socket, msg, p.error());
  const std::string realm = endpoint.realm();
  if (const auth::RealmConfig* rc = snap.auth.realm(realm); rc && rc->e2ee == "required" && p->enc.empty())
    return reply_error(socket, msg, Error{-6, "Realm '" + realm + "' requires end-to-end encrypted messages (enc)"});
  std::string payload = delivery_payload(*p);
  if (p->broadcast) {
    broadcast(ctx.broker, realm, *p, payload, attachments);
    if (msg.ack_id) socket.ack(*msg.ack_id, confirm_reply(0, Ok{}));
    return;
  }
  endpoint.realms.insert(realm);  // `from` binds a producer name here
  auto routing = ctx.broker.route_produce(realm, p->event, p->from, p->id, self, name_room(ctx, snap, endpoint));
  if (routing.new_name) endpoint.registrations.insert({realm, "p:" + p->from});
  // One delivery per subscription key, its encoding shared by every consumer under it (a message has few keys).
  std::vector<broker::Delivery> live;
  std::vector<broker::QueueCopy> copies;
  for (auto& route : routing.routes) {
    // ACK mode is always stored first; an offline durable or guaranteed copy is stored; an online
    // durable one passes through its queue, so that it cannot overtake a replay of that queue.
    bool store = route.policy.ack || (!route.endpoint && (route.durable || p->guaranteed));
    if (store || (route.durable && route.endpoint)) {
      copies.push_back({std::move(route.realm), std::move(route.key), std::move(route.consumer_id),
                        std::move(route.consumer), route.policy, !store});
      continue;
    }
    if (!route.endpoint) continue;  // offline, nothing asks to keep it: dropped
    auto d = std::find_if(live.begin(), live.end(), [&](const broker::Delivery& e) { return e.key == route.key; });
    if (d == live.end()) d = live.insert(live.end(), broker::Delivery(route.key, payload, attachments));
    route.endpoint->deliver(*d);
  }
  if (copies.empty()) {
    if (msg.ack_id) socket.ack(*msg.ack_id, confirm_reply(0, Ok{}));
    return;
  }
  bool behind = ctx.queues.behind();
  if (behind) {
    // The store is slower than the publishers: what would be stored is refused now, with the reason,
    // rather than queued without bound. Copies for online durable subscribers still go out live when
    // their queue is empty (QueueCopy::live_only: dropped otherwise, never stored); the rest of the
    // message has gone out already. The producer retries after a second.
    rate_limited(socket, endpoint, "store_backlog", 1);
    if (msg.ack_id)
      socket.ack(*msg.ack_id, confirm_reply(0, make_error("the store is behind; nothing was stored, retry later", 503)));
    std::erase_if(copies, [](const broker::QueueCopy& c) { return !c.live; });
    for (auto& c : copies) c.live_only = true;
    if (copies.empty()) return;
  }
  auto message = std::make_shared<broker::StoredMessage>();
  message->payload = std::move(payload);
  message->attachments = attachments;
  message->producer = p->from;
  message->ttl_ms = effective_ttl(*p, routing.default_ttl_ms, ctx.default_ttl());
  broker::DurableQueues::Confirm done;
  if (msg.ack_id && !behind) {
    done = [self, ack_id = *msg.ack_id](size_t stored, const Status& status) {
      self->send(ack_frames(ack_id, confirm_reply(stored, status)));
    };
  }
  ctx.queues.enqueue(std::move(message), std::move(copies), std::move(done));
}

void on_produce(Context& ctx, net::Socket& socket, const net::Message& msg) {
  const auth::Snapshot& snap = ctx.settings.current();
  auto endpoint = endpoint_of(socket);
  if (!admit(ctx, snap, socket, *endpoint, msg, "PRODUCE", {"producer"})) return;
  if (!within_rate(snap, socket, *endpoint, msg, msg.json.size())) return;
  std::string storage;
  auto object = request(socket, msg, storage);
  if (!object) return;
  produce(ctx, snap, socket, endpoint, msg, *object, {msg.attachments.begin(), msg.attachments.end()});
}

// ACK (§3.7): every outcome goes out as ACK_OK / ACK_FAIL and to the ack callback, if there is one.
void on_ack(Context& ctx, net::Socket& socket, const net::Message& msg) {
  auto endpoint = endpoint_of(socket);
  if (!admit(ctx, ctx.settings.current(), socket, *endpoint, msg, "ACK", {"consumer"})) return;
  auto answer = [endpoint, ack_id = msg.ack_id](int code, const std::string& id, const std::string& message) {
    std::string payload;
    if (code == 200) {
      payload = "{\"ok\":true,\"msgId\":";
      sio::append_json_string(payload, id);
      payload.push_back('}');
    } else {
      payload = error_reply(code, message);
    }
    endpoint->send(event_frames(code == 200 ? "ACK_OK" : "ACK_FAIL", payload));
    if (ack_id) endpoint->send(ack_frames(*ack_id, "[" + payload + "]"));
  };
  std::string storage;
  auto object = request_object(msg.json, storage);
  auto id = object ? parse_ack(*object) : Result<std::string>(make_error("Invalid ACK JSON", 400));
  if (!id) return answer(400, "", id.error().message);
  ctx.queues.ack(endpoint->realm(), socket.id(), *id, [answer, id = *id](int code, const std::string& message) {
    answer(code, id, message);
  });
}

// While a socket has unfinished transfers, a timer on its worker drops the idle ones even if no piece
// follows: a sender that stops must not hold its share of the server's chunk budget until it disconnects.
void watch_idle_transfers(const std::shared_ptr<SocketEndpoint>& endpoint) {
  if (endpoint->watching_chunks || endpoint->chunks.transfers() == 0) return;
  endpoint->watching_chunks = true;
  auto timer = std::make_shared<boost::asio::steady_timer>(endpoint->worker().io(),
                                                          std::chrono::milliseconds(kTransferIdleMs / 2));
  timer->async_wait([timer, weak = std::weak_ptr<SocketEndpoint>(endpoint)](const boost::system::error_code&) {
    auto e = weak.lock();
    if (!e) return;
    e->watching_chunks = false;
    e->chunks.drop_idle(unix_ms());
    watch_idle_transfers(e);
  });
}

// PRODUCE_CHUNK (§3.6): pieces of a PRODUCE's JSON, joined in index order once `total` have arrived.
void on_produce_chunk(Context& ctx, net::Socket& socket, const net::Message& msg) {
  const auth::Snapshot& snap = ctx.settings.current();
  auto endpoint = endpoint_of(socket);
  if (!admit(ctx, snap, socket, *endpoint, msg, "PRODUCE_CHUNK", {"producer"})) return;
  if (!within_rate(snap, socket, *endpoint, msg, msg.json.size())) return;
  std::string storage;
  auto object = request(socket, msg, storage);
  if (!object) return;
  auto chunk = parse_produce_chunk(*object);
  if (!chunk) return reply_error(socket, msg, chunk.error());
  const std::string transfer = chunk->transfer_id;
  const size_t total = chunk->total;
  auto joined = endpoint->chunks.add(std::move(*chunk), unix_ms());
  watch_idle_transfers(endpoint);
  if (!joined) return reply_error(socket, msg, joined.error());
  if (!*joined) {
    // A piece sent with an ack id is answered at once; the last one gets the PRODUCE's own answer.
    if (msg.ack_id)
      socket.ack(*msg.ack_id, "[{\"ok\":true,\"received\":" + std::to_string(endpoint->chunks.received(transfer)) +
                                  ",\"total\":" + std::to_string(total) + "}]");
    return;
  }
  if (auto valid = check_object_text(**joined); !valid)
    return reply_error(socket, msg, Error{kMalformedRequest, "PRODUCE_CHUNK: the joined data: " + valid.error().message});
  produce(ctx, snap, socket, endpoint, msg, **joined, {});
}

// §11.1's per-socket and per-realm caps on names (PRODUCER/CONSUMER) and subscriptions: true when
// `item` is already counted or fits; otherwise RATE_LIMITED (retry_after 60) and the event is dropped.
// One cap on names or subscriptions, at its three levels: the socket's own, the realm's, the server's.
struct Cap {
  double per_socket, per_realm, server;
  const char *socket_reason, *realm_reason, *server_reason;
};

// A socket's items are counted only while a cap applies; `in_realm()` and `in_server()` are asked only
// when their cap is set.
template <class Count, class Total>
bool within_cap(net::Socket& socket, SocketEndpoint& endpoint, std::set<std::pair<std::string, std::string>>& mine,
                const std::pair<std::string, std::string>& item, const Cap& cap, Count in_realm, Total in_server) {
  if (cap.per_socket <= 0 && cap.per_realm <= 0 && cap.server <= 0) return true;  // not counted while no cap applies
  if (mine.count(item)) return true;
  const char* reason = nullptr;
  if (cap.per_socket > 0 && static_cast<double>(mine.size()) >= cap.per_socket) reason = cap.socket_reason;
  else if (cap.per_realm > 0 && static_cast<double>(in_realm()) >= cap.per_realm) reason = cap.realm_reason;
  else if (cap.server > 0 && static_cast<double>(in_server()) >= cap.server) reason = cap.server_reason;
  if (reason) {
    rate_limited(socket, endpoint, reason, 60);
    return false;
  }
  mine.insert(item);
  return true;
}

// A consumer name belongs to the connection bound to it (issue 12): another connection may change the
// name's subscriptions and queues only while the name is offline, when it is an anonymous name (shared by
// definition), or with an admin or manager grant.
bool may_act_as(const broker::RealmRegistry& rm, const SocketEndpoint& me, const std::string& consumer) {
  if (consumer == "ANONYMOUS" || consumer.starts_with("ANONYMOUS-")) return true;
  if (me.grant && (me.grant->role == "admin" || me.grant->role == "manager")) return true;
  auto holder = rm.consumer_endpoint(consumer);
  return !holder || holder.get() == &me;
}

void refuse_foreign_name(net::Socket& socket, const net::Message& msg, const std::string& consumer) {
  reply_error(socket, msg, Error{-3, "Consumer name '" + consumer + "' is bound to another connection"});
}

void on_subscribe(Context& ctx, net::Socket& socket, const net::Message& msg) {
  const auth::Snapshot& snap = ctx.settings.current();
  auto endpoint = endpoint_of(socket);
  if (!admit(ctx, snap, socket, *endpoint, msg, "SUBSCRIBE", {"consumer"})) return;
  std::string storage;
  auto object = request(socket, msg, storage);
  if (!object) return;
  auto r = parse_subscribe(*object);
  if (!r) return reply_error(socket, msg, r.error());
  broker::SubscribeSpec spec;
  spec.event = r->event;
  spec.producer = r->producer;
  spec.consumer = r->consumer;
  spec.id = r->id.value_or(socket.id());
  spec.consumer_id = r->consumer_id.value_or(spec.id);
  spec.topic = r->mode == "topic";
  spec.group = r->group;
  spec.policy = delivery_policy(*r);
  spec.durable = r->durable || spec.policy.ack;  // §0 row 2: ACK mode without durable counts as durable
  const std::string realm = endpoint->realm();
  const auth::LimitValues& limits = snap.limits.for_realm(realm);
  std::string key = broker::subscription_key(spec.producer, spec.event);
  bool foreign = false;
  auto notices = ctx.broker.with_realm(realm, [&](broker::RealmRegistry& rm) -> std::optional<std::vector<broker::Notice>> {
    if (!may_act_as(rm, *endpoint, spec.consumer)) {
      foreign = true;
      return std::nullopt;
    }
    Cap cap{limits.max_subscriptions_per_socket, limits.max_subscriptions_per_realm,
            snap.limits.server.max_subscriptions_total, "max_subscriptions_per_socket", "max_subscriptions_per_realm",
            "max_subscriptions_total"};
    if (!within_cap(socket, *endpoint, endpoint->subscriptions, {realm, key + '\0' + spec.consumer}, cap,
                    [&] { return rm.subscription_count(); }, [&] { return ctx.broker.subscriptions_total(); }))
      return std::nullopt;
    auto out = rm.subscribe(spec, endpoint);
    // A durable subscription is stored (§0 row 6); a re-subscription without `durable` forgets it.
    if (spec.durable) ctx.queues.save_subscription(durable_subscription(realm, spec));
    else ctx.queues.remove_subscription(durable_subscription(realm, spec), false);
    // Every SUBSCRIBE replays what is stored for (realm, key, consumer_id) (§5.4). Posted under the
    // realm's lock: any message routed to the new subscription reaches the queue after the replay.
    ctx.queues.replay({realm, out.first, spec.consumer_id, spec.consumer, spec.policy}, endpoint);
    return std::move(out.second);
  });
  if (foreign) return refuse_foreign_name(socket, msg, spec.consumer);
  if (!notices) return;
  endpoint->realms.insert(realm);
  send_notices(*notices);
}

// UNSUBSCRIBE (§0 row 4): a key string, or {event, producer, consumer}.
void on_unsubscribe(Context& ctx, net::Socket& socket, const net::Message& msg) {
  auto endpoint = endpoint_of(socket);
  if (!admit(ctx, ctx.settings.current(), socket, *endpoint, msg, "UNSUBSCRIBE", {"consumer"})) return;
  auto elements = json_spans::array_elements(msg.json);
  if (!elements || elements->size() < 2) return reply_error(socket, msg, Error{kMalformedRequest, "UNSUBSCRIBE: missing payload"});
  std::string key;
  std::string consumer;
  std::string_view payload = (*elements)[1];
  std::string storage;
  auto object = payload.front() == '{' ? std::optional<std::string_view>(payload) : std::nullopt;
  if (!object && payload.front() == '"') {
    auto text = json_spans::unescape(payload);
    if (text && !text->empty() && text->front() == '{') {
      if (auto valid = check_object_text(*text); !valid)
        return reply_error(socket, msg, Error{kMalformedRequest, "UNSUBSCRIBE: payload string: " + valid.error().message});
      storage = std::move(*text);
      object = storage;
    } else if (text) {
      key = broker::lower(*text);
    }
  }
  if (object) {
    auto r = parse_subscribe(*object);
    if (!r) return reply_error(socket, msg, r.error());
    key = broker::subscription_key(r->producer, r->event);
    consumer = r->consumer;
  }
  if (key.empty()) return reply_error(socket, msg, Error{kMalformedRequest, "UNSUBSCRIBE: payload must be a key or {event, producer, consumer}"});
  const std::string realm = endpoint->realm();
  bool foreign = false;
  auto removed = ctx.broker.with_realm(realm, [&](broker::RealmRegistry& rm) {
    if (consumer.empty()) return rm.unsubscribe_all_of(key, endpoint);
    std::vector<broker::SubscribeSpec> out;
    if (!may_act_as(rm, *endpoint, consumer)) {
      foreign = true;
      return out;
    }
    if (auto spec = rm.unsubscribe(key, consumer)) out.push_back(std::move(*spec));
    return out;
  });
  if (foreign) return refuse_foreign_name(socket, msg, consumer);
  for (auto& spec : removed) {
    endpoint->subscriptions.erase({realm, key + '\0' + spec.consumer});
    // A durable subscription takes its queue with it (§0 row 4).
    if (spec.durable) ctx.queues.remove_subscription(durable_subscription(realm, spec), true);
  }
}

// §6.6: ANONYMOUS and ANONYMOUS-* names only where the realm allows them; otherwise ERROR -4 and the
// socket is dropped.
bool name_allowed(const auth::Snapshot& snap, net::Socket& socket, const std::string& realm, const std::string& name) {
  if (name != "ANONYMOUS" && !name.starts_with("ANONYMOUS-")) return true;
  if (snap.auth.anonymous_allowed(realm)) return true;
  socket.emit("ERROR", error_object(-4, "Anonymous names are not allowed in realm '" + realm + "'"));
  socket.disconnect(true);
  return false;
}

// PRODUCER (§3.1) and CONSUMER (§3.2).
void on_register(Context& ctx, net::Socket& socket, const net::Message& msg, bool producer) {
  const auth::Snapshot& snap = ctx.settings.current();
  auto endpoint = endpoint_of(socket);
  if (!admit(ctx, snap, socket, *endpoint, msg, producer ? "PRODUCER" : "CONSUMER",
             {producer ? std::string_view("producer") : std::string_view("consumer")}))
    return;
  auto reg = registration(socket, msg, producer ? "producer" : "consumer");
  if (!reg) return;
  const std::string realm = endpoint->realm();
  if (!name_allowed(snap, socket, realm, reg->name)) return;
  const auth::LimitValues& limits = snap.limits.for_realm(realm);
  auto notices = ctx.broker.with_realm(realm, [&](broker::RealmRegistry& rm) -> std::optional<std::vector<broker::Notice>> {
    Cap cap{limits.max_registrations_per_socket, limits.max_registrations_per_realm,
            snap.limits.server.max_registrations_total, "max_registrations_per_socket", "max_registrations_per_realm",
            "max_registrations_total"};
    if (!within_cap(socket, *endpoint, endpoint->registrations, {realm, (producer ? "p:" : "c:") + reg->name}, cap,
                    [&] { return rm.producer_count() + rm.consumer_count(); }, [&] { return ctx.broker.names_total(); }))
      return std::vector<broker::Notice>{};
    if (producer) return rm.register_producer(reg->name, reg->id, endpoint, reg->default_ttl_ms);
    return rm.register_consumer(reg->name, reg->id, endpoint);
  });
  if (!notices) {
    // The name is held by another live connection: the newcomer is told and dropped (§3.2).
    socket.emit("ERROR", error_object(-3, "Duplicate consumer name: " + reg->name));
    socket.disconnect(true);
    return;
  }
  endpoint->realms.insert(realm);
  send_notices(*notices);
}

// A new socket on "/": its address, an implicit {default, both} while auth is off (§2), and §11.1's
// per-address connection limits (RATE_LIMITED, then the connection closes 100 ms later).
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
    rate_limited(*s, *endpoint, reason, retry_after);
    auto timer = std::make_shared<boost::asio::steady_timer>(endpoint->worker().io(), std::chrono::milliseconds(100));
    timer->async_wait([timer, weak](const boost::system::error_code&) {
      if (auto s = weak.lock(); s && s->connected()) s->disconnect(true);
    });
  });
}

}  // namespace

std::function<void()> register_tyo_mq(net::SioServer& sio, broker::Broker& broker, broker::DurableQueues& queues,
                                      auth::LiveSettings& settings, TyoMqOptions options) {
  auto ctx = std::make_shared<Context>(broker, queues, settings, std::move(options));
  net::Namespace ns;
  ns.name = "/";
  ns.on_connect = [ctx](net::Socket& socket, std::string_view) -> std::optional<std::string> {
    on_connect(*ctx, socket);
    return std::nullopt;
  };
  // PING: the ack callback receives the JSON *string* of the payload plus pong and timestamp (§3.8).
  // PING, QUIT, HELLO and DEBUG pass the gate with an empty role list (§3): open realms, implicit grants
  // and the roles admin, manager and both.
  auto open_gate = [ctx](net::Socket& socket, const net::Message& msg, std::string_view event) {
    return admit(*ctx, ctx->settings.current(), socket, *endpoint_of(socket), msg, event, {});
  };
  ns.handlers["PING"] = [open_gate](net::Socket& socket, const net::Message& msg) {
    if (!open_gate(socket, msg, "PING") || !msg.ack_id) return;
    std::string reply = ping_reply(msg.json, iso_timestamp(std::chrono::system_clock::now()));
    std::string args = "[";
    sio::append_json_string(args, reply);
    args.push_back(']');
    socket.ack(*msg.ack_id, args);
  };
  ns.handlers["PRODUCER"] = [ctx](net::Socket& s, const net::Message& m) { on_register(*ctx, s, m, true); };
  ns.handlers["CONSUMER"] = [ctx](net::Socket& s, const net::Message& m) { on_register(*ctx, s, m, false); };
  ns.handlers["SUBSCRIBE"] = [ctx](net::Socket& s, const net::Message& m) { on_subscribe(*ctx, s, m); };
  ns.handlers["UNSUBSCRIBE"] = [ctx](net::Socket& s, const net::Message& m) { on_unsubscribe(*ctx, s, m); };
  ns.handlers["PRODUCE"] = [ctx](net::Socket& s, const net::Message& m) { on_produce(*ctx, s, m); };
  ns.handlers["PRODUCE_CHUNK"] = [ctx](net::Socket& s, const net::Message& m) { on_produce_chunk(*ctx, s, m); };
  ns.handlers["ACK"] = [ctx](net::Socket& s, const net::Message& m) { on_ack(*ctx, s, m); };
  // QUIT: the payload must be the socket's own id; the server then disconnects it.
  ns.handlers["QUIT"] = [open_gate](net::Socket& socket, const net::Message& msg) {
    if (!open_gate(socket, msg, "QUIT")) return;
    auto args = json_spans::array_elements(msg.json);
    if (args && args->size() >= 2 && json_spans::unescape((*args)[1]).value_or("") == socket.id()) return socket.disconnect(true);
    reply_error(socket, msg, Error{kMalformedRequest, "QUIT: the payload must be this socket's id"});
  };
  // HELLO and DEBUG are logged only.
  ns.handlers["HELLO"] = [open_gate](net::Socket& socket, const net::Message& msg) {
    if (!open_gate(socket, msg, "HELLO")) return;
    std::string storage;
    auto object = request(socket, msg, storage);
    if (!object) return;
    spdlog::info("HELLO from {} ({}): {}", socket.id(), log_text(socket.remote_address()), log_text(*object));
  };
  ns.handlers["DEBUG"] = [open_gate](net::Socket& socket, const net::Message& msg) {
    if (!open_gate(socket, msg, "DEBUG")) return;
    spdlog::debug("DEBUG from {}: {}", socket.id(), msg.json);
  };
  register_auth_handlers(ctx, ns);
  register_management_handlers(ctx, ns);
  // Issue 12: events that carry a credential are paced per socket (key, token and proof guessing), and
  // the small control events count against the messages bucket wherever limits set one, like PRODUCE.
  for (const char* event : {"AUTHENTICATION", "AUTHORIZATION_REQUEST", "AUTHORIZATION_NEXT", "AUTHORIZATION_DECIDE",
                            "AUTH_MANAGEMENT_COMMAND"}) {
    ns.handlers[event] = [ctx, inner = std::move(ns.handlers[event])](net::Socket& s, const net::Message& m) {
      if (within_credential_rate(*ctx, s, m)) inner(s, m);
    };
  }
  for (const char* event : {"PING", "HELLO", "ACK", "UNSUBSCRIBE", "QUIT", "DEBUG"}) {
    ns.handlers[event] = [ctx, inner = std::move(ns.handlers[event])](net::Socket& s, const net::Message& m) {
      if (within_rate(ctx->settings.current(), s, *endpoint_of(s), m, m.json.size())) inner(s, m);
    };
  }
  ns.on_disconnect = [ctx](net::Socket& socket, std::string_view) {
    auto endpoint = socket.state<SocketEndpoint>();
    if (!endpoint) return;
    ctx->sessions.remove(endpoint.get());
    // Every name it bound goes offline, in every realm it used.
    for (const auto& realm : endpoint->realms) {
      std::vector<broker::Notice> notices;
      ctx->broker.if_realm(realm, [&](broker::RealmRegistry& r) { notices = r.disconnect(endpoint); });
      send_notices(notices);
    }
    // Its ACK timers stop; what it had in flight stays stored for the next replay (§4.7).
    ctx->queues.socket_closed(socket.id());
  };
  sio.add_namespace(std::move(ns));
  return [ctx] { housekeeping(*ctx); };
}

}  // namespace siomq::surfaces
