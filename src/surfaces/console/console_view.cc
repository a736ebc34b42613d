#include "surfaces/console/console_view.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <map>
#include <set>

#include "auth/enrolment.h"
#include "broker/broker.h"
#include "broker/durable_queues.h"
#include "broker/streams.h"
#include "surfaces/bus/bus_stats.h"
#include "surfaces/bus/stream_answers.h"
#include "surfaces/http/metrics.h"
#include "surfaces/tyo_mq/public_settings.h"

namespace siomq::surfaces::console {
namespace {

using nlohmann::json;

// What the first step reads on the caller's thread, carried on through the queues' and streams' threads.
struct Gathered {
  ConsoleScope scope;
  std::set<std::string> realms;  // in scope: with clients or configured (the queues' realms join later)
  std::map<std::string, broker::RealmRegistry::Counts> counts;
  std::map<std::string, size_t> pending;
  std::optional<broker::RealmRegistry::Clients> clients;  // of the watched realm
  json enrolment = json::array();
  json settings;
  json overview;  // without the queues' part
  broker::QueueView queues;
  std::vector<broker::StreamInfo> streams;  // of the watched realm
};

bool in_scope(const ConsoleScope& scope, const std::string& realm) { return scope.admin || realm == scope.realm; }

json realm_counts_json(const std::string& name, const Gathered& g, const ConsoleParts& parts) {
  broker::RealmRegistry::Counts c;
  if (auto it = g.counts.find(name); it != g.counts.end()) c = it->second;
  broker::RealmQueueCounts q;
  if (auto it = g.queues.realms.find(name); it != g.queues.realms.end()) q = it->second;
  auto pending = g.pending.find(name);
  return {{"name", name},
          {"producers", {{"total", c.producers}, {"online", c.producers_online}}},
          {"consumers", {{"total", c.consumers}, {"online", c.consumers_online}}},
          {"subscriptions", c.keys},
          {"queued", q.queued},
          {"in_flight", q.in_flight},
          {"dead", q.dead},
          {"streams", parts.streams ? parts.streams->counts(name).streams : 0},
          {"enrolment_pending", pending == g.pending.end() ? 0 : pending->second}};
}

json overview_json(const ConsoleParts& parts) {
  const Context& ctx = *parts.tyo;
  auto uptime = std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now() - ctx.started);
  surfaces::http::Metrics::Totals m = surfaces::http::process_metrics().totals();
  const bus::BusStats& b = bus::bus_stats();
  return {{"version", parts.version},
          {"node_id", ctx.cluster ? json(ctx.cluster->node_id()) : json()},
          {"uptime_s", uptime.count()},
          {"threads", parts.threads},
          {"connections", parts.connections ? parts.connections() : 0},
          {"rss_bytes", bus::rss_bytes()},
          {"slow_consumers", parts.slow_consumers ? parts.slow_consumers() : 0},
          {"store",
           {{"backend", parts.backend},
            {"sync", parts.sync},
            {"writes", m.store_writes},
            {"write_last_us", m.last_store_write_ns / 1000},
            {"write_avg_us", m.store_writes ? m.store_write_seconds * 1e6 / static_cast<double>(m.store_writes) : 0.0}}},
          {"totals",
           {{"produced", m.produced},
            {"delivered", m.delivered},
            {"bus_in", b.in_msgs.load(std::memory_order_relaxed)},
            {"bus_out", b.out_msgs.load(std::memory_order_relaxed)}}}};
}

void add_queue_totals(json& overview, const broker::QueueStats& q) {
  json& totals = overview["totals"];
  totals["enqueued"] = q.enqueued;
  totals["acked"] = q.acked;
  totals["redelivered"] = q.redelivered;
  totals["dead_lettered"] = q.dead_lettered;
  totals["expired"] = q.expired;
  overview["store"]["failures"] = q.store_failures;
  overview["queues"] = {{"queued", q.queued}, {"queued_bytes", q.queued_bytes}, {"in_flight", q.in_flight}, {"dead", q.dead}};
}

json clients_json(const broker::RealmRegistry::Clients& c) {
  json producers = json::array(), consumers = json::array();
  for (const auto& p : c.producers) producers.push_back({{"name", p.name}, {"online", p.online}});
  for (const auto& con : c.consumers) {
    json subs = json::array();
    for (const auto& [key, spec] : con.subscriptions) {
      subs.push_back({{"event", spec.event},
                      {"key", key},
                      {"producer", spec.producer},
                      {"topic", spec.topic},
                      {"group", spec.group ? json(*spec.group) : json()},
                      {"durable", spec.durable},
                      {"ack", spec.policy.ack}});
    }
    consumers.push_back({{"name", con.name}, {"online", con.online}, {"subscriptions", std::move(subs)}});
  }
  return {{"producers", std::move(producers)}, {"consumers", std::move(consumers)}};
}

// A stream as the console lists it: StreamMeta and StreamState (bus.md §5) flattened, with its consumers.
json stream_json(const broker::StreamInfo& info) {
  json meta = json::parse(bus::stream_meta_json(info), nullptr, false);
  const broker::StreamState& st = info.state;
  json out = {{"name", info.config.name},        {"subjects", info.config.subjects}, {"messages", st.messages},
              {"bytes", st.bytes},                {"first_seq", st.first_seq},         {"last_seq", st.last_seq}};
  for (const char* k : {"storage", "retention"}) out[k] = meta.is_object() ? meta.value(k, json()) : json();
  json consumers = json::array();
  for (const auto& c : info.consumers) {
    if (consumers.size() == kMaxListed) break;
    consumers.push_back({{"name", c.config.name},
                         {"push", c.config.push()},
                         {"pending", c.num_pending},
                         {"ack_pending", c.num_ack_pending},
                         {"redelivered", c.num_redelivered},
                         {"waiting", c.num_waiting},
                         {"delivered_stream", c.delivered_stream},
                         {"ack_floor_stream", c.ack_floor_stream}});
  }
  out["consumers"] = std::move(consumers);
  return out;
}

json detail_json(const Gathered& g) {
  json out = {{"realm", *g.scope.watched}};
  bool truncated = g.queues.truncated;
  if (g.clients) {
    json c = clients_json(*g.clients);
    out["producers"] = std::move(c["producers"]);
    out["consumers"] = std::move(c["consumers"]);
    truncated |= g.clients->truncated;
  } else {
    out["producers"] = json::array();
    out["consumers"] = json::array();
  }
  json queues = json::array();
  for (const auto& q : g.queues.queues) {
    queues.push_back({{"event", q.key},
                      {"consumer", q.consumer},
                      {"consumer_id", q.consumer_id},
                      {"depth", q.depth},
                      {"in_flight", q.in_flight},
                      {"oldest_ms", q.oldest_ms ? json(q.oldest_ms) : json()}});
  }
  out["queues"] = std::move(queues);
  json streams = json::array();
  for (const auto& s : g.streams) {
    if (streams.size() == kMaxListed) {
      truncated = true;
      break;
    }
    streams.push_back(stream_json(s));
  }
  out["streams"] = std::move(streams);
  out["truncated"] = truncated;
  return out;
}

// The realm's block of the public settings for a manager; the whole public settings for an admin.
json settings_json(const Context& ctx, const ConsoleScope& scope) {
  json doc = ctx.settings.document();
  if (scope.admin) return public_settings(doc);
  json realm = json::object();
  if (doc.contains("auth") && doc["auth"].is_object() && doc["auth"].contains("realms") && doc["auth"]["realms"].is_object() &&
      doc["auth"]["realms"].contains(scope.realm))
    realm = public_realm(doc["auth"]["realms"][scope.realm]);
  return {{"realms", {{scope.realm, realm}}}};
}

// The first step, on the caller's thread.
std::shared_ptr<Gathered> read_here(const ConsoleParts& parts, ConsoleScope scope) {
  Context& ctx = *parts.tyo;
  auto g = std::make_shared<Gathered>();
  g->scope = std::move(scope);
  const ConsoleScope& s = g->scope;
  if (s.admin) {
    for (auto& name : ctx.broker.realm_names()) g->realms.insert(std::move(name));
    for (const auto& [name, cfg] : ctx.settings.current().auth.realms) g->realms.insert(name);
    g->overview = overview_json(parts);
  } else {
    g->realms.insert(s.realm);
  }
  // Only the realms that can be listed: the queues' realms added later only sort some of these past the
  // cut, and a realm the broker does not hold has nothing to count.
  size_t counted = 0;
  for (const auto& name : g->realms) {
    if (counted++ == kMaxRealms) break;
    ctx.broker.if_realm(name, [&](broker::RealmRegistry& r) { g->counts[name] = r.counts(); });
  }
  if (s.watched)
    ctx.broker.if_realm(*s.watched, [&](broker::RealmRegistry& r) { g->clients = r.clients(kMaxListed); });
  auto pending = ctx.enrolment.pending_list(s.admin ? std::nullopt : std::optional(s.realm), auth::kDefaultMaxPending);
  for (const auto& r : pending) {
    ++g->pending[r.realm];
    if (g->enrolment.size() < kMaxListed) g->enrolment.push_back(auth::public_request(r));
  }
  g->settings = settings_json(ctx, s);
  return g;
}

// The last step: every key, in order.
ConsoleView assemble(const ConsoleParts& parts, Gathered& g) {
  ConsoleView view;
  if (g.scope.admin) {
    for (const auto& [name, counts] : g.queues.realms) g.realms.insert(name);
    add_queue_totals(g.overview, g.queues.totals);
    g.overview["realms_total"] = g.realms.size();
    view.emplace_back("overview", g.overview.dump(-1, ' ', false, json::error_handler_t::replace));
  }
  size_t listed = 0;
  for (const auto& name : g.realms) {
    if (!in_scope(g.scope, name)) continue;
    if (listed++ == kMaxRealms) break;
    view.emplace_back("realm/" + name, realm_counts_json(name, g, parts).dump(-1, ' ', false, json::error_handler_t::replace));
  }
  if (g.scope.watched) view.emplace_back("detail", detail_json(g).dump(-1, ' ', false, json::error_handler_t::replace));
  view.emplace_back("enrolment", g.enrolment.dump(-1, ' ', false, json::error_handler_t::replace));
  view.emplace_back("settings", g.settings.dump(-1, ' ', false, json::error_handler_t::replace));
  return view;
}

}  // namespace

void gather(const ConsoleParts& parts, ConsoleScope scope, Back back, std::function<void(ConsoleView)> done) {
  std::shared_ptr<Gathered> g = read_here(parts, std::move(scope));
  std::optional<std::string> watched = g->scope.watched;
  std::optional<std::string> only = g->scope.admin ? std::nullopt : std::optional(g->scope.realm);
  // The JSON is made back on the caller's thread: the queues' and streams' threads only read.
  auto finish = [&parts, g, back, done = std::move(done)]() mutable {
    back([&parts, g, done = std::move(done)] { done(assemble(parts, *g)); });
  };
  parts.tyo->queues.view(watched, only, kMaxListed, [&parts, g, finish = std::move(finish)](broker::QueueView q) mutable {
    g->queues = std::move(q);
    if (!g->scope.watched || !parts.streams) return finish();
    parts.streams->list(
        *g->scope.watched,
        [g, finish = std::move(finish)](Result<std::vector<broker::StreamInfo>> streams) mutable {
          if (streams) g->streams = std::move(*streams);
          finish();
        },
        true);
  });
}

}  // namespace siomq::surfaces::console
