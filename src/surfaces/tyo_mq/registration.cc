#include "surfaces/tyo_mq/registration.h"

#include <boost/asio/post.hpp>

#include <optional>
#include <string>
#include <vector>

#include "broker/broker.h"
#include "net/worker_pool.h"
#include "surfaces/gate.h"
#include "surfaces/tyo_mq/answers.h"
#include "surfaces/tyo_mq/caps.h"
#include "surfaces/tyo_mq/frames.h"
#include "surfaces/tyo_mq/requests.h"
#include "surfaces/tyo_mq/socket_endpoint.h"

namespace siomq::surfaces {
namespace {

struct NamedRegistration {
  std::string name;
  std::string id;
  std::optional<int64_t> default_ttl_ms;  // -1: the producer's messages never expire
};

// A registration's name and id (§3.1, §3.2): name must be a string; id defaults to the session id.
std::optional<NamedRegistration> registration(const Session& session, const Request& request, Reply& reply,
                                              std::string_view what) {
  std::string storage;
  auto object = request_object_or_error(request, reply, storage);
  if (!object) return std::nullopt;
  auto reg = parse_registration(*object);
  if (!reg.name) {
    reply_error(reply, Error{-1, "Incorrect " + std::string(what) + "'s name"});
    return std::nullopt;
  }
  NamedRegistration out{std::move(*reg.name), reg.id.value_or(session.id()), std::nullopt};
  Ttl ttl = parse_ttl(reg.default_ttl);
  if (ttl.kind == Ttl::Kind::never) out.default_ttl_ms = -1;
  if (ttl.kind == Ttl::Kind::ms) out.default_ttl_ms = ttl.ms;
  return out;
}

// §6.6: ANONYMOUS and ANONYMOUS-* names only where the realm allows them; otherwise ERROR -4 and the
// connection is dropped.
bool name_allowed(const auth::Snapshot& snap, Session& session, Reply& reply, const std::string& realm,
                  const std::string& name) {
  if (name != "ANONYMOUS" && !name.starts_with("ANONYMOUS-")) return true;
  if (snap.auth.anonymous_allowed(realm)) return true;
  reply.emit("ERROR", error_object(-4, "Anonymous names are not allowed in realm '" + realm + "'"));
  session.close_now();
  return false;
}

// Claims a session may wait on at once (each is a round trip through Redis).
constexpr uint16_t kMaxClaimsWaiting = 16;

// §3.2 step 4: the newcomer is told and dropped; the holder keeps the name.
void refuse_duplicate(Session& session, Reply& reply, const std::string& name) {
  reply.emit("ERROR", error_object(-3, "Duplicate consumer name: " + name));
  session.close_now();
}

// Binds the name in `realm` on this node (the registration caps first); returns whether it did (if not,
// the client has been answered).
bool bind_name(Context& ctx, Session& session, Reply& reply, const std::string& realm, const NamedRegistration& reg,
               bool producer) {
  const auth::Snapshot& snap = ctx.settings.current();
  const auth::LimitValues& limits = snap.limits.for_realm(realm);
  broker::EndpointPtr endpoint = session.endpoint();
  bool bound = false;
  auto notices = ctx.broker.with_realm(realm, [&](broker::RealmRegistry& rm) -> std::optional<std::vector<broker::Notice>> {
    Cap cap{limits.max_registrations_per_socket, limits.max_registrations_per_realm,
            snap.limits.server.max_registrations_total, "max_registrations_per_socket", "max_registrations_per_realm",
            "max_registrations_total"};
    if (!within_cap(session, reply, session.held().registrations, {realm, (producer ? "p:" : "c:") + reg.name}, cap,
                    [&] { return rm.producer_count() + rm.consumer_count(); }, [&] { return ctx.broker.names_total(); }))
      return std::vector<broker::Notice>{};
    bound = true;
    if (producer) return rm.register_producer(reg.name, reg.id, endpoint, reg.default_ttl_ms);
    return rm.register_consumer(reg.name, reg.id, endpoint);
  });
  if (!notices) {
    // The name is held by another live connection: the newcomer is told and dropped (§3.2).
    refuse_duplicate(session, reply, reg.name);
    return false;
  }
  session.held().realms.insert(realm);
  send_notices(*notices);
  return bound;
}

}  // namespace

// In a cluster a consumer name is unique across the nodes (docs/scale-out.md): bound here at once, as on
// one node (what the client sends next relies on it), and claimed in Redis (cluster/name_claims.h); when
// another node holds it, the newcomer hears ERROR -3 and is dropped a round trip later. Each claim is
// released once: at once when refused, else when the session ends.
void claim_consumer_name(Context& ctx, Session& session, Reply& reply, const std::string& realm, const std::string& name) {
  if (!ctx.cluster || !session.held().claimed_names.insert({realm, name}).second) return;
  ++session.claims_waiting;
  ctx.cluster->claim_name(realm, name, [ctx = ctx.shared_from_this(), s = session.shared(), kept = reply.keep(), realm,
                                        name](const Status& granted) {
    boost::asio::post(s->worker().io(), [ctx, s, kept, realm, name, granted] {
      --s->claims_waiting;
      if (granted || s->ended) return;  // (released when the session ends, or was already)
      s->held().claimed_names.erase({realm, name});
      ctx->cluster->release_name(realm, name);
      refuse_duplicate(*s, *kept, name);
    });
  });
}

bool may_claim(const Session& session, const std::string& realm, const std::string& name) {
  return session.holdings().claimed_names.count({realm, name}) || session.claims_waiting < kMaxClaimsWaiting;
}

namespace {

void bind_and_claim(Context& ctx, Session& session, Reply& reply, const std::string& realm, const NamedRegistration& reg) {
  if (!may_claim(session, realm, reg.name))
    return reply_error(reply, Error{429, "CONSUMER: too many registrations wait for the cluster; retry later"});
  if (bind_name(ctx, session, reply, realm, reg, false)) claim_consumer_name(ctx, session, reply, realm, reg.name);
}

void on_register(Context& ctx, Session& session, const Request& request, Reply& reply, bool producer) {
  const auth::Snapshot& snap = ctx.settings.current();
  if (!admit(ctx.gate(), snap, session, reply, producer ? "PRODUCER" : "CONSUMER",
             {producer ? std::string_view("producer") : std::string_view("consumer")}))
    return;
  auto reg = registration(session, request, reply, producer ? "producer" : "consumer");
  if (!reg) return;
  const std::string realm = session.realm();
  if (!name_allowed(snap, session, reply, realm, reg->name)) return;
  if (!producer && ctx.cluster) return bind_and_claim(ctx, session, reply, realm, *reg);
  bind_name(ctx, session, reply, realm, *reg, producer);
}

}  // namespace

void on_producer(Context& ctx, Session& session, const Request& request, Reply& reply) {
  on_register(ctx, session, request, reply, true);
}

void on_consumer(Context& ctx, Session& session, const Request& request, Reply& reply) {
  on_register(ctx, session, request, reply, false);
}

void release_claimed_names(Context& ctx, Session& session) {
  session.ended = true;
  if (!ctx.cluster) return;
  if (!session.holds_anything()) return;
  for (const auto& [realm, name] : session.holdings().claimed_names) ctx.cluster->release_name(realm, name);
  session.held().claimed_names.clear();
}

void drop_lost_name(Context& ctx, const std::string& realm, const std::string& name) {
  broker::EndpointPtr holder;
  ctx.broker.if_realm(realm, [&](broker::RealmRegistry& rm) { holder = rm.consumer_endpoint(name); });
  auto session = std::dynamic_pointer_cast<SocketEndpoint>(holder);
  if (!session) return;
  session->notify("ERROR", error_object(-3, "Duplicate consumer name: " + name));
  session->close();
}

}  // namespace siomq::surfaces
