#include "surfaces/tyo_mq/e2ee.h"

#include <chrono>
#include <optional>
#include <string>
#include <utility>

#include "broker/key_directory.h"
#include "surfaces/gate.h"
#include "surfaces/tyo_mq/answers.h"
#include "surfaces/tyo_mq/cluster_keys.h"
#include "surfaces/tyo_mq/e2ee_requests.h"
#include "surfaces/tyo_mq/ping.h"
#include "wire/json_text.h"
#include "wire/socketio.h"

namespace siomq::surfaces {
namespace {

void answer(Reply& reply, std::string_view object) {
  std::string args = "[";
  args.append(object);
  args.push_back(']');
  reply.ack(args);
}

void answer_error(Reply& reply, const Error& e) { answer(reply, error_reply(e.code ? e.code : 500, e.message)); }

// The gate (§3: producer, consumer) and the request object; nullopt once refused or answered.
std::optional<std::string_view> admitted(Context& ctx, Session& session, const Request& request, Reply& reply,
                                         std::string& storage) {
  if (!admit(ctx.gate(), ctx.settings.current(), session, reply, request.event, {"producer", "consumer"}))
    return std::nullopt;
  return request_object_or_error(request, reply, storage);
}

// KEY_PUBLISH and PREKEY_PUBLISH speak for `identity` only if this connection holds that name in its realm.
bool registered_here(Context& ctx, Session& session, Reply& reply, const std::string& identity) {
  bool bound = false;
  broker::EndpointPtr endpoint = session.endpoint();
  ctx.broker.if_realm(session.realm(), [&](broker::RealmRegistry& rm) { bound = rm.bound_to(identity, endpoint); });
  if (!bound)
    answer_error(reply, make_error("identity '" + identity + "' is not registered on this connection (send PRODUCER or "
                                   "CONSUMER with that name first)", 403));
  return bound;
}

std::string iso_ms(int64_t ms) {
  return iso_timestamp(std::chrono::system_clock::time_point(std::chrono::milliseconds(ms)));
}

using json_text::append_member;

std::string keys_answer(const std::vector<broker::PublicKey>& keys) {
  std::string out = "{\"keys\":[";
  for (const auto& k : keys) {
    out.push_back('{');
    append_member(out, "key_id", k.key_id);
    if (!k.alg.empty()) append_member(out, "alg", k.alg);
    append_member(out, "public_key", k.public_key);
    append_member(out, "updated_at", iso_ms(k.updated_ms));
    out.back() = '}';
    out.push_back(',');
  }
  if (!keys.empty()) out.pop_back();
  out.append("]}");
  return out;
}

std::string taken_answer(const std::string& identity, const broker::TakenBundle& t) {
  const broker::PrekeyBundle& b = t.bundle;
  std::string out = "{\"ok\":true,\"found\":true,";
  append_member(out, "identity", identity);
  broker::append_bundle_fields(out, b);
  if (t.one_time) {
    append_member(out, "one_time_prekey", t.one_time->key);
    append_member(out, "one_time_prekey_id", t.one_time->id);
  } else {
    out.append("\"one_time_prekey\":null,\"one_time_prekey_id\":null,");
  }
  append_member(out, "one_time_remaining", t.remaining);
  append_member(out, "updated_at", iso_ms(b.updated_ms));
  out.back() = '}';
  return out;
}

void not_offered(Context& ctx, Session& session, const Request& request, Reply& reply, std::string_view what) {
  if (!admit(ctx.gate(), ctx.settings.current(), session, reply, request.event, {"producer", "consumer"})) return;
  answer_error(reply, make_error(std::string(what) + " is not available on this server", 501));
}

}  // namespace

void on_key_publish(Context& ctx, Session& session, const Request& request, Reply& reply) {
  std::string storage;
  auto object = admitted(ctx, session, request, reply, storage);
  if (!object) return;
  auto r = parse_key_publish(*object);
  if (!r) return answer_error(reply, r.error());
  if (!registered_here(ctx, session, reply, r->identity)) return;
  if (ctx.cluster) return publish_key_shared(ctx, reply, session.realm(), r->identity, std::move(r->key));
  ctx.keys.publish_key(session.realm(), r->identity, std::move(r->key), [kept = reply.keep()](const Status& s) {
    if (s) answer(*kept, "{\"ok\":true}");
    else answer_error(*kept, s.error());
  });
}

void on_key_lookup(Context& ctx, Session& session, const Request& request, Reply& reply) {
  std::string storage;
  auto object = admitted(ctx, session, request, reply, storage);
  if (!object) return;
  auto identity = parse_identity(*object);
  if (!identity) return answer_error(reply, identity.error());
  ctx.keys.lookup_keys(session.realm(), *identity, [kept = reply.keep()](std::vector<broker::PublicKey> keys) {
    answer(*kept, keys_answer(keys));
  });
}

void on_prekey_publish(Context& ctx, Session& session, const Request& request, Reply& reply) {
  std::string storage;
  auto object = admitted(ctx, session, request, reply, storage);
  if (!object) return;
  auto r = parse_prekey_publish(*object);
  if (!r) return answer_error(reply, r.error());
  if (!registered_here(ctx, session, reply, r->identity)) return;
  ctx.keys.publish_prekeys(session.realm(), r->identity, std::move(r->bundle),
                           [kept = reply.keep()](const Result<size_t>& pool) {
                             if (!pool) return answer_error(*kept, pool.error());
                             answer(*kept, "{\"ok\":true,\"one_time_available\":" + std::to_string(*pool) + "}");
                           });
}

void on_prekey_take(Context& ctx, Session& session, const Request& request, Reply& reply) {
  std::string storage;
  auto object = admitted(ctx, session, request, reply, storage);
  if (!object) return;
  auto identity = parse_identity(*object);
  if (!identity) return answer_error(reply, identity.error());
  ctx.keys.take_prekeys(session.realm(), *identity,
                        [kept = reply.keep(), identity = *identity](const Result<std::optional<broker::TakenBundle>>& t) {
                          if (!t) return answer_error(*kept, t.error());
                          if (!*t) return answer(*kept, "{\"ok\":true,\"found\":false}");
                          answer(*kept, taken_answer(identity, **t));
                        });
}

void on_sealed_sender(Context& ctx, Session& session, const Request& request, Reply& reply) {
  not_offered(ctx, session, request, reply, "sealed sender");
}

void on_push(Context& ctx, Session& session, const Request& request, Reply& reply) {
  not_offered(ctx, session, request, reply, "push");
}

}  // namespace siomq::surfaces
