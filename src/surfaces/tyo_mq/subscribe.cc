#include "surfaces/tyo_mq/subscribe.h"

#include <optional>
#include <string>
#include <vector>

#include "broker/broker.h"
#include "broker/durable_queues.h"
#include "surfaces/gate.h"
#include "surfaces/tyo_mq/answers.h"
#include "surfaces/tyo_mq/caps.h"
#include "surfaces/tyo_mq/registration.h"
#include "surfaces/tyo_mq/requests.h"
#include "surfaces/tyo_mq/stored_subscription.h"
#include "wire/json_spans.h"
#include "wire/socketio.h"

namespace siomq::surfaces {
namespace {

// Names anyone may subscribe under (ANONYMOUS, ANONYMOUS-*; any name for an admin or a manager).
bool shared_name(const Session& session, const std::string& consumer) {
  if (consumer == "ANONYMOUS" || consumer.starts_with("ANONYMOUS-")) return true;
  return session.grant && (session.grant->role == "admin" || session.grant->role == "manager");
}

// A consumer name belongs to the connection bound to it (issue 12): another connection may change the
// name's subscriptions and queues only while the name is offline, when it is an anonymous name (shared by
// definition), or with an admin or manager grant. `me` is the session's endpoint.

bool may_act_as(const broker::RealmRegistry& rm, const Session& session, const broker::Endpoint* me,
                const std::string& consumer) {
  if (shared_name(session, consumer)) return true;
  auto holder = rm.consumer_endpoint(consumer);
  return !holder || holder.get() == me;
}

void refuse_foreign_name(Reply& reply, const std::string& consumer) {
  reply_error(reply, Error{-3, "Consumer name '" + consumer + "' is bound to another connection"});
}

}  // namespace

void on_subscribe(Context& ctx, Session& session, const Request& request, Reply& reply) {
  const auth::Snapshot& snap = ctx.settings.current();
  if (!admit(ctx.gate(), snap, session, reply, "SUBSCRIBE", {"consumer"})) return;
  std::string storage;
  auto object = request_object_or_error(request, reply, storage);
  if (!object) return;
  auto r = parse_subscribe(*object);
  if (!r) return reply_error(reply, r.error());
  broker::SubscribeSpec spec;
  spec.event = r->event;
  spec.producer = r->producer;
  spec.consumer = r->consumer;
  spec.id = r->id.value_or(session.id());
  spec.consumer_id = r->consumer_id.value_or(spec.id);
  spec.topic = r->mode == "topic";
  spec.group = r->group;
  spec.policy = delivery_policy(*r);
  spec.durable = r->durable || spec.policy.ack;  // §0 row 2: ACK mode without durable counts as durable
  const std::string realm = session.realm();
  const auth::LimitValues& limits = snap.limits.for_realm(realm);
  std::string key = broker::subscription_key(spec.producer, spec.event);
  broker::EndpointPtr endpoint = session.endpoint();
  const bool claim = ctx.cluster && !shared_name(session, spec.consumer);
  if (claim && !may_claim(session, realm, spec.consumer))
    return reply_error(reply, Error{429, "SUBSCRIBE: too many registrations wait for the cluster; retry later"});
  bool foreign = false;
  auto notices = ctx.broker.with_realm(realm, [&](broker::RealmRegistry& rm) -> std::optional<std::vector<broker::Notice>> {
    if (!may_act_as(rm, session, endpoint.get(), spec.consumer)) {
      foreign = true;
      return std::nullopt;
    }
    Cap cap{limits.max_subscriptions_per_socket, limits.max_subscriptions_per_realm,
            snap.limits.server.max_subscriptions_total, "max_subscriptions_per_socket", "max_subscriptions_per_realm",
            "max_subscriptions_total"};
    if (!within_cap(session, reply, session.held().subscriptions, {realm, key + '\0' + spec.consumer}, cap,
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
  if (foreign) return refuse_foreign_name(reply, spec.consumer);
  if (!notices) return;
  session.held().realms.insert(realm);
  send_notices(*notices);
  // In a cluster the name is held by one connection across the nodes, as CONSUMER's (registration.h), and
  // a durable consumer's queues live where it subscribed last (server/durable_moves.h).
  if (claim) claim_consumer_name(ctx, session, reply, realm, spec.consumer);
  // Shared names (ANONYMOUS, an admin's) are no one's to move.
  if (claim && spec.durable) ctx.cluster->claim_home(realm, spec.consumer);
}

void on_unsubscribe(Context& ctx, Session& session, const Request& request, Reply& reply) {
  if (!admit(ctx.gate(), ctx.settings.current(), session, reply, "UNSUBSCRIBE", {"consumer"})) return;
  auto elements = json_spans::array_elements(request.args);
  if (!elements || elements->size() < 2) return reply_error(reply, Error{kMalformedRequest, "UNSUBSCRIBE: missing payload"});
  std::string key;
  std::string consumer;
  std::string_view payload = (*elements)[1];
  std::string storage;
  auto object = payload.front() == '{' ? std::optional<std::string_view>(payload) : std::nullopt;
  if (!object && payload.front() == '"') {
    auto text = json_spans::unescape(payload);
    if (text && !text->empty() && text->front() == '{') {
      if (auto valid = check_object_text(*text); !valid)
        return reply_error(reply, Error{kMalformedRequest, "UNSUBSCRIBE: payload string: " + valid.error().message});
      storage = std::move(*text);
      object = storage;
    } else if (text) {
      key = broker::lower(*text);
    }
  }
  if (object) {
    auto r = parse_subscribe(*object);
    if (!r) return reply_error(reply, r.error());
    key = broker::subscription_key(r->producer, r->event);
    consumer = r->consumer;
  }
  if (key.empty()) return reply_error(reply, Error{kMalformedRequest, "UNSUBSCRIBE: payload must be a key or {event, producer, consumer}"});
  const std::string realm = session.realm();
  broker::EndpointPtr endpoint = session.endpoint();
  bool foreign = false;
  std::vector<std::string> homeless;  // consumers whose last subscription this was (their durable home goes)
  auto removed = ctx.broker.with_realm(realm, [&](broker::RealmRegistry& rm) {
    std::vector<broker::SubscribeSpec> out;
    if (consumer.empty()) {
      out = rm.unsubscribe_all_of(key, endpoint);
    } else if (!may_act_as(rm, session, endpoint.get(), consumer)) {
      foreign = true;
    } else if (auto spec = rm.unsubscribe(key, consumer)) {
      out.push_back(std::move(*spec));
    }
    for (const auto& spec : out) {
      if (spec.durable && rm.subscriptions_of(spec.consumer) == 0) homeless.push_back(spec.consumer);
    }
    return out;
  });
  if (foreign) return refuse_foreign_name(reply, consumer);
  for (auto& spec : removed) {
    session.held().subscriptions.erase({realm, key + '\0' + spec.consumer});
    // A durable subscription takes its queue with it (§0 row 4).
    if (spec.durable) ctx.queues.remove_subscription(durable_subscription(realm, spec), true);
  }
  if (ctx.cluster) {
    for (const auto& name : homeless) ctx.cluster->release_home(realm, name);
  }
}

void on_ack(Context& ctx, Session& session, const Request& request, Reply& reply) {
  if (!admit(ctx.gate(), ctx.settings.current(), session, reply, "ACK", {"consumer"})) return;
  // The answer may come from the store's thread: it goes through the kept reply, after the deliveries.
  auto answer = [kept = reply.keep()](int code, const std::string& id, const std::string& message) {
    std::string payload;
    if (code == 200) {
      payload = "{\"ok\":true,\"msgId\":";
      sio::append_json_string(payload, id);
      payload.push_back('}');
    } else {
      payload = error_reply(code, message);
    }
    kept->emit(code == 200 ? "ACK_OK" : "ACK_FAIL", payload);
    if (kept->has_ack()) kept->ack("[" + payload + "]");
  };
  std::string storage;
  auto object = request_object(request.args, storage, request.outline);
  auto id = object ? parse_ack(*object, Outlined{request.args, request.outline})
                   : Result<std::string>(make_error("Invalid ACK JSON", 400));
  if (!id) return answer(400, "", id.error().message);
  ctx.queues.ack(session.realm(), session.id(), *id, [answer, id = *id](int code, const std::string& message) {
    answer(code, id, message);
  });
}

}  // namespace siomq::surfaces
