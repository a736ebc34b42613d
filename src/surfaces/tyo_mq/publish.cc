#include "surfaces/tyo_mq/publish.h"

#include <boost/asio/steady_timer.hpp>

#include <algorithm>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "auth/hmac.h"
#include "broker/broker.h"
#include "broker/durable_queues.h"
#include "net/worker_pool.h"
#include "surfaces/gate.h"
#include "surfaces/http/metrics.h"
#include "surfaces/tyo_mq/answers.h"
#include "surfaces/tyo_mq/requests.h"
#include "wire/clock.h"
#include "wire/js_json.h"
#include "wire/json_spans.h"
#include "wire/socketio.h"

namespace siomq::surfaces {
namespace {

// The delivery object of §4.2: {event, message, from, [enc], [to], [content_type]}, message spliced raw.
std::string delivery_payload(const ProduceRequest& p) {
  std::string out;
  // Room for the fixed text (the names, quotes and separators of every member) and the values, so the
  // buffer is allocated once for an unescaped payload.
  out.reserve(80 + p.event.size() + p.message.size() + p.from.size() + p.enc.size() + p.to.size() +
              (p.content_type ? p.content_type->size() : 0));
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
    for (const auto& r : routes) {
      r.endpoint->deliver(broker::Delivery(r.key, payload, attachments));
      http::process_metrics().delivered(realm, r.key);
    }
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

// How many names the session's realm may hold for a PRODUCE's `from` to be bound as a new one: none once
// the session or the server is at its cap on names, else the realm's cap. Names made by PRODUCE count
// like those made by PRODUCER, so a stream of fresh `from` names cannot grow a realm without bound.
size_t name_room(Context& ctx, const auth::Snapshot& snap, const Session& session) {
  const auth::LimitValues& l = snap.limits.for_realm(session.realm());
  const double server_cap = snap.limits.server.max_registrations_total;
  const size_t made = session.holdings().registrations.size();
  if (l.max_registrations_per_socket > 0 && static_cast<double>(made) >= l.max_registrations_per_socket) return 0;
  if (server_cap > 0 && static_cast<double>(ctx.broker.names_total()) >= server_cap) return 0;
  return l.max_registrations_per_realm > 0 ? static_cast<size_t>(l.max_registrations_per_realm) : SIZE_MAX;
}

// A guaranteed message's write to the SSE history: its confirm waits for it, whichever comes first
// (the history's write runs on the store's writer thread).
class HistoryWrite {
 public:
  using Then = std::function<void(const Status&)>;
  void written(const Status& s) {
    Then f;
    {
      std::lock_guard lock(mu_);
      status_ = s;
      done_ = true;
      f = std::move(then_);
    }
    if (f) f(s);
  }
  void then(Then f) {
    {
      std::lock_guard lock(mu_);
      if (!done_) {
        then_ = std::move(f);
        return;
      }
    }
    f(status_);  // never written again once done_
  }

 private:
  std::mutex mu_;
  bool done_ = false;
  Status status_ = Ok{};
  Then then_;
};

// A publisher confirm in a cluster whose durable queues live on their consumers' home nodes: the copies
// stored here and those stored by the nodes the message was relayed to (each answers, cluster/relay_confirms.h)
// in one confirm, sent when both parts are known. Any thread.
class ConfirmJoin {
 public:
  explicit ConfirmJoin(std::shared_ptr<Reply> kept) : kept_(std::move(kept)) {}
  void part(size_t stored, const Status& status) {
    {
      std::lock_guard lock(mu_);
      stored_ += stored;
      if (!status && status_) status_ = status;
      if (--parts_ > 0) return;
    }
    kept_->ack(confirm_reply(stored_, status_));
  }

 private:
  std::mutex mu_;
  int parts_ = 2;  // this node's, the other nodes'
  size_t stored_ = 0;
  Status status_ = Ok{};
  std::shared_ptr<Reply> kept_;
};

// The message as the other nodes of a cluster get it (tyo-mq §10): the raw values as they came, the TTL
// the origin would store copies with (PRODUCE's ttl, else a lifespan other than -1, else the
// producer's default, in seconds).
cluster::RelayedMessage relayed(const std::string& realm, const ProduceRequest& p, std::optional<int64_t> default_ttl_ms,
                                const std::vector<std::string>& attachments) {
  cluster::RelayedMessage m;
  m.attachments = attachments;
  m.realm = realm;
  m.event = p.event;
  m.message = std::string(p.message);
  m.producer = p.from;
  if (!p.ttl.empty() && p.ttl != "null") m.ttl = std::string(p.ttl);
  else if (!p.lifespan.empty() && p.lifespan != "null" && p.lifespan != "-1") m.ttl = std::string(p.lifespan);
  else if (default_ttl_ms) m.ttl = js::number(static_cast<double>(*default_ttl_ms) / 1000.0);
  m.guaranteed = p.guaranteed;
  if (p.enc != "null") m.enc = std::string(p.enc);
  if (p.to != "null") m.to = std::string(p.to);
  m.content_type = p.content_type;
  m.broadcast = p.broadcast;
  if (!p.broadcast_scope.empty()) m.broadcast_scope = p.broadcast_scope;
  m.group = p.group;
  return m;
}

// Sends the live copies of `routes` — one delivery per subscription key, its encoding shared by every
// consumer under it (a message has few keys) — and returns the copies to store, as §5.1's table says.
std::vector<broker::QueueCopy> send_live(const ProduceRequest& p, const std::string& payload,
                                         const std::vector<std::string>& attachments, const std::string& delivery_id,
                                         std::vector<broker::Route>& routes) {
  std::vector<broker::Delivery> live;
  // Live copies per (realm, key), for the metrics: counted once per key, not once per consumer.
  struct Tally {
    std::string_view realm, key;
    uint64_t copies;
  };
  std::vector<Tally> tallies;
  std::vector<broker::QueueCopy> copies;
  for (auto& route : routes) {
    // ACK mode is always stored first; an offline durable or guaranteed copy is stored; an online
    // durable one passes through its queue, so that it cannot overtake a replay of that queue.
    bool store = route.policy.ack || (!route.endpoint && (route.durable || p.guaranteed));
    if (store || (route.durable && route.endpoint)) {
      copies.push_back({std::move(route.realm), std::move(route.key), std::move(route.consumer_id),
                        std::move(route.consumer), route.policy, !store});
      continue;
    }
    if (!route.endpoint) continue;  // offline, nothing asks to keep it: dropped
    auto d = std::find_if(live.begin(), live.end(), [&](const broker::Delivery& e) { return e.key == route.key; });
    if (d == live.end()) {
      d = live.insert(live.end(), broker::Delivery(route.key, payload, attachments));
      d->delivery_id = delivery_id;
    }
    route.endpoint->deliver(*d);
    auto t = std::find_if(tallies.begin(), tallies.end(), [&](const Tally& x) { return x.key == route.key && x.realm == route.realm; });
    if (t == tallies.end()) tallies.push_back({route.realm, route.key, 1});
    else ++t->copies;
  }
  for (const Tally& t : tallies) http::process_metrics().delivered(t.realm, t.key, t.copies);
  return copies;
}

// PRODUCE (§3.5) of a request object; `attachments` are the packet's binary attachments. Each routed
// copy is sent live or stored, as §5.1's table says.
void produce(Context& ctx, const auth::Snapshot& snap, Session& session, Reply& reply, std::string_view object,
             const std::vector<std::string>& attachments, Outlined outlined = {}) {
  auto p = parse_produce(object, outlined);
  if (!p) return reply_error(reply, p.error());
  const std::string realm = session.realm();
  http::process_metrics().produced(realm, p->event);
  // `!obj.enc` as the reference reads it: null, false, 0 and "" are no encryption metadata either.
  if (const auth::RealmConfig* rc = snap.auth.realm(realm); rc && rc->e2ee == "required" && !json_spans::truthy(p->enc))
    return reply_error(reply, Error{-6, "Realm '" + realm + "' requires end-to-end encrypted messages (enc)"});
  std::string payload = delivery_payload(*p);
  // The id SSE streams name this message by (§9): PRODUCE.id, else "m-" + 24 hex — made only when SSE is on.
  std::string delivery_id = p->id ? *p->id : ctx.on_guaranteed ? "m-" + auth::random_hex(12) : std::string();
  if (p->broadcast) {
    broadcast(ctx.broker, realm, *p, payload, attachments);
    if (ctx.cluster) ctx.cluster->relay(relayed(realm, *p, std::nullopt, attachments));
    if (reply.has_ack()) reply.ack(confirm_reply(0, Ok{}));
    return;
  }
  // In the history before it is routed, so an SSE stream opening meanwhile gets it exactly once.
  // A store too far behind to take it: refused whole, before anything is routed, so a retry cannot
  // deliver it twice.
  std::shared_ptr<HistoryWrite> history;
  if (p->guaranteed && ctx.on_guaranteed) {
    history = std::make_shared<HistoryWrite>();
    if (!ctx.on_guaranteed(realm, p->event, delivery_id, payload, [history](const Status& s) { history->written(s); })) {
      rate_limited(session, reply, "store_backlog", 1, steady_ms());
      if (reply.has_ack())
        reply.ack(confirm_reply(0, make_error("the store is behind; nothing was sent or stored, retry later", 503)));
      return;
    }
  }
  // `from` binds a producer name here: a connection's end takes it offline in this realm. (A session
  // without an endpoint, an HTTP or bridged publish, has no end to wait for, and nothing to allocate.)
  broker::EndpointPtr self = session.endpoint();
  if (self) session.held().realms.insert(realm);
  // In a cluster a group's turn may go to another node's member (docs/scale-out.md "Consumer groups").
  std::shared_ptr<const broker::RemoteGroups> remote = ctx.cluster ? ctx.cluster->remote_groups() : nullptr;
  auto routing = ctx.broker.route_produce(realm, p->event, p->from, p->id, self, name_room(ctx, snap, session),
                                          remote.get());
  if (routing.new_name) session.held().registrations.insert({realm, "p:" + p->from});
  std::shared_ptr<ConfirmJoin> join;
  if (ctx.cluster) {
    cluster::RelayedMessage m = relayed(realm, *p, routing.default_ttl_ms, attachments);
    // Where durable queues live on their homes, copies may be stored on other nodes: the confirm waits
    // for them (a node that does not answer in time makes it an error: the copies may be stored there).
    if (reply.has_ack() && ctx.cluster->durable_homes()) {
      join = std::make_shared<ConfirmJoin>(reply.keep());
      m.confirmed = [join](size_t stored, const Status& status) { join->part(stored, status); };
    }
    std::vector<std::string> turns;
    for (const auto& pick : routing.remote_picks) turns.push_back(pick.group);
    m.group_picks = std::move(routing.remote_picks);
    // Turns the relay cannot take stay here: this node's members have them.
    if (!ctx.cluster->relay(std::move(m)) && !turns.empty()) {
      for (auto& route : ctx.broker.route_groups(realm, p->event, p->from, turns)) routing.routes.push_back(std::move(route));
    }
  }
  if (ctx.to_bus && !session.from_bus) ctx.to_bus(realm, p->event, p->from, p->message);
  std::vector<broker::QueueCopy> copies = send_live(*p, payload, attachments, delivery_id, routing.routes);
  if (copies.empty()) {
    if (!reply.has_ack()) return;
    if (join) {
      if (!history) return join->part(0, Ok{});
      return history->then([join](const Status& s) { join->part(0, s); });
    }
    if (!history) return reply.ack(confirm_reply(0, Ok{}));
    return history->then([kept = reply.keep()](const Status& s) { kept->ack(confirm_reply(0, s)); });
  }
  bool behind = ctx.queues.behind();
  if (behind) {
    // The store is slower than the publishers: what would be stored is refused now, with the reason,
    // rather than queued without bound. Copies for online durable subscribers still go out live when
    // their queue is empty (QueueCopy::live_only: dropped otherwise, never stored); the rest of the
    // message has gone out already. The producer retries after a second.
    rate_limited(session, reply, "store_backlog", 1, steady_ms());
    Error refused = make_error("the store is behind; nothing was stored, retry later", 503);
    if (join) join->part(0, refused);
    else if (reply.has_ack()) reply.ack(confirm_reply(0, refused));
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
  if (join && !behind) {
    done = [join, history](size_t stored, const Status& status) {
      if (!history) return join->part(stored, status);
      history->then([join, stored, status](const Status& h) { join->part(stored, status ? h : status); });
    };
  } else if (reply.has_ack() && !behind) {
    // The kept reply sends through the requester's outbox: after the deliveries routed to it before.
    done = [kept = reply.keep(), history](size_t stored, const Status& status) {
      if (!history) return kept->ack(confirm_reply(stored, status));
      history->then([kept, stored, status](const Status& h) { kept->ack(confirm_reply(stored, status ? h : status)); });
    };
  }
  ctx.queues.enqueue(std::move(message), std::move(copies), std::move(done));
}

// While a session has unfinished transfers, a timer on its worker drops the idle ones even if no piece
// follows: a sender that stops must not hold its share of the server's chunk budget until it disconnects.
void watch_idle_transfers(const std::shared_ptr<Session>& session) {
  if (session->watching_chunks || session->holdings().chunks.transfers() == 0) return;
  session->watching_chunks = true;
  auto timer = std::make_shared<boost::asio::steady_timer>(session->worker().io(),
                                                          std::chrono::milliseconds(kTransferIdleMs / 2));
  timer->async_wait([timer, weak = std::weak_ptr<Session>(session)](const boost::system::error_code&) {
    auto s = weak.lock();
    if (!s) return;
    s->watching_chunks = false;
    s->held().chunks.drop_idle(unix_ms());
    watch_idle_transfers(s);
  });
}

}  // namespace

void on_produce(Context& ctx, Session& session, const Request& request, Reply& reply) {
  const auth::Snapshot& snap = ctx.settings.current();
  if (!admit(ctx.gate(), snap, session, reply, "PRODUCE", {"producer"})) return;
  if (!within_rate(snap, session, reply, request.args.size())) return;
  std::string storage;
  auto object = request_object_or_error(request, reply, storage);
  if (!object) return;
  produce(ctx, snap, session, reply, *object, {request.attachments.begin(), request.attachments.end()},
          Outlined{request.args, request.outline});
}

void on_produce_chunk(Context& ctx, Session& session, const Request& request, Reply& reply) {
  const auth::Snapshot& snap = ctx.settings.current();
  if (!admit(ctx.gate(), snap, session, reply, "PRODUCE_CHUNK", {"producer"})) return;
  if (!within_rate(snap, session, reply, request.args.size())) return;
  std::string storage;
  auto object = request_object_or_error(request, reply, storage);
  if (!object) return;
  auto chunk = parse_produce_chunk(*object);
  if (!chunk) return reply_error(reply, chunk.error());
  const std::string transfer = chunk->transfer_id;
  const size_t total = chunk->total;
  auto joined = session.held().chunks.add(std::move(*chunk), unix_ms());
  watch_idle_transfers(session.shared());
  if (!joined) return reply_error(reply, joined.error());
  if (!*joined) {
    // A piece sent with an ack id is answered at once; the last one gets the PRODUCE's own answer.
    if (reply.has_ack())
      reply.ack("[{\"ok\":true,\"received\":" + std::to_string(session.held().chunks.received(transfer)) +
                ",\"total\":" + std::to_string(total) + "}]");
    return;
  }
  if (auto valid = check_object_text(**joined); !valid)
    return reply_error(reply, Error{kMalformedRequest, "PRODUCE_CHUNK: the joined data: " + valid.error().message});
  produce(ctx, snap, session, reply, **joined, {});
}

// A message produced on another node of the cluster (§10): delivered as the origin delivers it, to this
// node's connected subscribers — groups are the origin's to pick from (their members here are reached
// through it). An ACK-mode or durable subscriber connected here gets its copy through its queue here, as
// the reference does; with durable homes (storage redis) the offline durable consumers whose home is this
// node get theirs stored here too, and an origin waiting for a confirm hears how many copies were stored.
void deliver_relayed(Context& ctx, const cluster::RelayedMessage& m) {
  ProduceRequest p;
  p.event = m.event;
  p.message = m.message;
  p.from = m.producer.value_or("ANONYMOUS");
  p.guaranteed = m.guaranteed;
  p.ttl = m.ttl;
  p.broadcast = m.broadcast;
  p.broadcast_scope = m.broadcast_scope.value_or("");
  p.group = m.group;
  p.to = m.to;
  p.enc = m.enc;
  p.content_type = m.content_type;
  const std::string payload = delivery_payload(p);
  // The origin waits for this node's answer when its publisher asked for a confirm (relay_confirms.h).
  auto answer = [&ctx, origin = m.node_id, confirm = m.confirm](size_t stored, const Status& status) {
    if (confirm && ctx.cluster) ctx.cluster->answer_relayed(origin, confirm, stored, status);
  };
  if (p.broadcast) {
    broadcast(ctx.broker, m.realm, p, payload, m.attachments);
    return answer(0, Ok{});
  }
  auto routes = ctx.broker.route_relayed(m.realm, p.event, p.from, m.groups);
  // A consumer offline here gets nothing relayed, unless its durable queues live here (their home is this
  // node, docs/scale-out.md "Durable queues across nodes"): then what it would have kept is stored.
  const bool home = ctx.cluster && ctx.cluster->durable_homes();
  std::erase_if(routes, [&](const broker::Route& r) { return !r.endpoint && !(home && (r.durable || p.guaranteed)); });
  if (routes.empty()) return answer(0, Ok{});
  const std::string delivery_id = ctx.on_guaranteed ? "m-" + auth::random_hex(12) : std::string();
  auto copies = send_live(p, payload, m.attachments, delivery_id, routes);
  if (copies.empty()) return answer(0, Ok{});
  const bool behind = ctx.queues.behind();
  if (behind) {
    // As for a local PRODUCE when the store is behind: online durable copies go out live, nothing is stored.
    answer(0, make_error("the store is behind; nothing was stored, retry later", 503));
    std::erase_if(copies, [](const broker::QueueCopy& c) { return !c.live; });
    for (auto& c : copies) c.live_only = true;
    if (copies.empty()) return;
  }
  auto message = std::make_shared<broker::StoredMessage>();
  message->payload = payload;
  message->attachments = m.attachments;
  message->producer = p.from;
  message->ttl_ms = effective_ttl(p, std::nullopt, ctx.default_ttl());
  broker::DurableQueues::Confirm done;
  if (m.confirm && !behind) done = answer;  // the context it refers to outlives the queues' callbacks
  ctx.queues.enqueue(std::move(message), std::move(copies), std::move(done));
}

}  // namespace siomq::surfaces
