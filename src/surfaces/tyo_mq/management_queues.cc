#include "surfaces/tyo_mq/management_queues.h"

#include "broker/durable_queues.h"
#include "surfaces/http/metrics.h"
#include "surfaces/tyo_mq/management_fields.h"
#include "surfaces/tyo_mq/signed_request.h"
#include "wire/js_json.h"

namespace siomq::surfaces::management {
using nlohmann::json;

json dlq_entry(const store::DeadRow& d) {
  json message = json::parse(d.row.payload.str(), nullptr, false);
  return {{"id", d.row.id},
          {"realm", d.row.realm},
          {"event", d.row.event},
          {"consumer", d.row.consumer},
          {"message", message.is_discarded() ? json(d.row.payload.str()) : message},
          {"producer", d.row.producer},
          {"created_at", js::iso_date(d.row.created_ms)},
          {"expires_at", d.row.expires_ms ? json(d.row.expires_ms) : json()},
          {"reason", d.reason},
          {"dead_lettered_at", js::iso_date(d.dead_lettered_ms)}};
}

// An SSE stream is a consumer of its realm's registry (`__http_sse__:<id>`), so it is counted here
// with the socket consumers.
json stats_json(Context& ctx) {
  json realms = json::object();
  for (const auto& name : ctx.broker.realm_names()) {
    auto c = ctx.broker.with_realm(name, [](broker::RealmRegistry& r) { return r.counts(); });
    realms[name] = {{"producers", {{"total", c.producers}, {"online", c.producers_online}}},
                    {"consumers", {{"total", c.consumers}, {"online", c.consumers_online}}},
                    {"subscriptions", c.keys}};
  }
  json out = {{"realms", realms}, {"connections_current", ctx.sessions.size()}};
  if (ctx.cluster) out["cluster_node_id"] = ctx.cluster->node_id();
  return out;
}

namespace {

// dlq_discard and dlq_replay: the message's id (msg_id, msgId or id) and an optional realm.
struct DeadRef {
  std::optional<std::string> realm;
  std::string msg_id;
};

std::optional<DeadRef> dead_ref(const Call& c) {
  auto realm = text(c.body, {"realm"});
  auto id = text(c.body, {"msg_id", "msgId", "id"});
  if (!realm || !id || !*id) {
    Error e = !realm ? realm.error() : !id ? id.error() : bad("msg_id must be a string");
    answer(c.reply, "AUTH_MANAGEMENT_FAIL", failure(e));
    return std::nullopt;
  }
  return DeadRef{*realm, **id};
}

}  // namespace

void stats(const Call& c) {
  answer(c.reply, "AUTH_MANAGEMENT_RESULT", {{"ok", true}, {"stats", stats_json(c.ctx)}});
}

void dlq_list(const Call& c) {
  auto realm = text(c.body, {"realm"});
  if (!realm) return answer(c.reply, "AUTH_MANAGEMENT_FAIL", failure(realm.error()));
  c.ctx.queues.dlq_list(*realm, [reply = c.reply.keep(), realm = *realm](std::vector<store::DeadRow> rows) {
    json entries = json::array();
    for (const auto& d : rows) entries.push_back(dlq_entry(d));
    async_result(*reply, {{"ok", true}, {"realm", realm ? json(*realm) : json()}, {"entries", entries}});
  });
}

void dlq_discard(const Call& c) {
  auto ref = dead_ref(c);
  if (!ref) return;
  c.ctx.queues.dlq_discard(ref->msg_id, ref->realm, [reply = c.reply.keep(), msg_id = ref->msg_id](const Status& s) {
    async_result(*reply, s ? json{{"ok", true}, {"msg_id", msg_id}} : failure(s.error()));
  });
}

void dlq_replay(const Call& c) {
  auto ref = dead_ref(c);
  if (!ref) return;
  c.ctx.queues.dlq_replay(ref->msg_id, ref->realm, [reply = c.reply.keep(), msg_id = ref->msg_id](const Result<std::string>& r) {
    async_result(*reply, r ? json{{"ok", true}, {"msg_id", msg_id}, {"new_msg_id", *r}} : failure(r.error()));
  });
}

}  // namespace siomq::surfaces::management
