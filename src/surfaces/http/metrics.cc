#include "surfaces/http/metrics.h"

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>
#include <prometheus/text_serializer.h>

#include <algorithm>
#include <limits>
#include <sstream>

#include "broker/durable_queues.h"
#include "cluster/link.h"
#include "net/write_latency.h"
#include "surfaces/http/bounded_counters.h"

namespace siomq::surfaces::http {
namespace {

prometheus::Counter& plain_counter(prometheus::Registry& r, const char* name, const char* help) {
  return prometheus::BuildCounter().Name(name).Help(help).Register(r).Add({});
}

prometheus::Gauge& plain_gauge(prometheus::Registry& r, const char* name, const char* help) {
  return prometheus::BuildGauge().Name(name).Help(help).Register(r).Add({});
}

// siomq_read_to_write_seconds, from the write path's own per-thread counts (net/write_latency.h): the
// hot path records into plain per-thread buckets, not into a prometheus-cpp Histogram (a mutex each).
prometheus::MetricFamily read_to_write_family() {
  net::WriteLatency w = net::write_latency();
  prometheus::MetricFamily family;
  family.name = "siomq_read_to_write_seconds";
  family.help = "From a WebSocket read to the write of each frame it caused (deliveries, answers), in the server";
  family.type = prometheus::MetricType::Histogram;
  prometheus::ClientMetric m;
  m.histogram.sample_count = w.count;
  m.histogram.sample_sum = static_cast<double>(w.sum_us) / 1e6;
  uint64_t cumulative = 0;
  for (size_t i = 0; i < w.buckets.size(); ++i) {
    cumulative += w.buckets[i];
    double le = i < net::kWriteLatencyBoundsUs.size() ? net::kWriteLatencyBoundsUs[i] / 1e6
                                                       : std::numeric_limits<double>::infinity();
    m.histogram.bucket.push_back({cumulative, le});
  }
  family.metric.push_back(std::move(m));
  return family;
}

}  // namespace

struct Metrics::Families {
  // A counter that mirrors a running total kept elsewhere (the durable queues', the Engine.IO server's):
  // each scrape adds what the total gained since the last one.
  struct MirroredCounter {
    prometheus::Counter* counter;
    uint64_t seen = 0;
    void update(uint64_t total) {
      if (total > seen) counter->Increment(static_cast<double>(total - seen));
      seen = std::max(seen, total);
    }
  };

  explicit Families(size_t max_series)
      : connections(*registry, "tyo_mq_connections_total", "Socket.IO connections accepted on /", {}, 1),
        produced(*registry, "tyo_mq_messages_produced_total", "Messages produced", {"event", "realm"}, max_series),
        delivered(*registry, "tyo_mq_messages_delivered_total", "Copies delivered to consumers, by subscription key",
                  {"event", "realm"}, max_series),
        queued(*registry, "tyo_mq_messages_queued_total", "Copies stored for durable delivery", {"realm"}, max_series),
        dlq(*registry, "tyo_mq_messages_dlq_total", "Copies moved to the dead-letter queue", {"realm"}, max_series),
        ack_timeouts(*registry, "tyo_mq_ack_timeout_total", "ACK deadlines missed", {"realm"}, max_series),
        rate_limited(*registry, "tyo_mq_rate_limited_total", "Requests refused by a limit", {"reason"}, max_series),
        sse(*registry, "tyo_mq_sse_connections_total", "Server-Sent Events streams opened", {"realm"}, max_series),
        connections_current(prometheus::BuildGauge()
                                .Name("tyo_mq_connections_current")
                                .Help("Engine.IO sessions open")
                                .Register(*registry)
                                .Add({})),
        deliveries(plain_counter(*registry, "siomq_deliveries_total", "Copies delivered, live and stored, every attempt")),
        stored{&plain_counter(*registry, "siomq_messages_stored_total", "Copies written to the store")},
        acked{&plain_counter(*registry, "siomq_messages_acked_total", "Stored copies acknowledged")},
        redelivered{&plain_counter(*registry, "siomq_messages_redelivered_total", "Stored copies sent again after an ACK timeout")},
        dead_lettered{&plain_counter(*registry, "siomq_messages_dead_lettered_total", "Stored copies moved to the DLQ")},
        expired{&plain_counter(*registry, "siomq_messages_expired_total", "Stored copies dropped by their TTL")},
        dropped{&plain_counter(*registry, "siomq_messages_dropped_total",
                               "Copies not stored: over a realm's queue caps, or the store behind")},
        slow_consumers{&plain_counter(*registry, "siomq_slow_consumers_total",
                                      "Sessions closed because their outbound queue passed its bound")},
        queued_now(plain_gauge(*registry, "siomq_messages_queued", "Copies stored now")),
        in_flight(plain_gauge(*registry, "siomq_messages_in_flight", "Stored copies sent and waiting for an ACK")),
        dead_now(plain_gauge(*registry, "siomq_dead_letters", "Entries in the dead-letter queue now")),
        worker_sessions(prometheus::BuildGauge()
                            .Name("siomq_worker_sessions")
                            .Help("Engine.IO sessions open on each worker thread")
                            .Register(*registry)),
        store_writes(prometheus::BuildHistogram()
                         .Name("siomq_store_write_seconds")
                         .Help("Time of one group write of the store writer, sync included")
                         .Register(*registry)
                         .Add({}, prometheus::Histogram::BucketBoundaries{0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005,
                                                                          0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5})) {}

  std::shared_ptr<prometheus::Registry> registry = std::make_shared<prometheus::Registry>();
  BoundedCounters connections, produced, delivered, queued, dlq, ack_timeouts, rate_limited, sse;
  prometheus::Gauge& connections_current;
  prometheus::Counter& deliveries;
  MirroredCounter stored, acked, redelivered, dead_lettered, expired, dropped, slow_consumers;
  prometheus::Gauge &queued_now, &in_flight, &dead_now;
  prometheus::Family<prometheus::Gauge>& worker_sessions;
  std::vector<prometheus::Gauge*> worker_gauges;
  prometheus::Histogram& store_writes;
  // Made at the first scrape that has cluster figures: a node alone shows none.
  struct ClusterFamilies {
    explicit ClusterFamilies(prometheus::Registry& r)
        : connected(plain_gauge(r, "siomq_cluster_connected", "1 while this node's link to the cluster's Redis is up")),
          peers(plain_gauge(r, "siomq_cluster_peers", "Other siomq nodes whose interest this node holds")),
          interest_terms(plain_gauge(r, "siomq_cluster_interest_terms", "(realm, event) terms this node asks the others for")),
          reference_mode(plain_gauge(r, "siomq_cluster_reference_mode",
                                     "1 while messages are relayed on <prefix>:messages for reference nodes")),
          relayed_out{&plain_counter(r, "siomq_cluster_relayed_out_total", "Messages produced here and sent to other nodes")},
          relayed_in{&plain_counter(r, "siomq_cluster_relayed_in_total", "Messages relayed by other nodes and delivered here")},
          relay_dropped{&plain_counter(r, "siomq_cluster_relay_dropped_total", "Messages not relayed: Redis away or behind")},
          relay_refused{&plain_counter(r, "siomq_cluster_relay_refused_total", "Texts on the relay channels that were not messages")},
          relay_unwanted{&plain_counter(r, "siomq_cluster_relay_unwanted_total",
                                        "Messages produced here that no other node wanted: not sent")},
          outages{&plain_counter(r, "siomq_cluster_outages_total", "Times Redis went away")} {}
    prometheus::Gauge &connected, &peers, &interest_terms, &reference_mode;
    MirroredCounter relayed_out, relayed_in, relay_dropped, relay_refused, relay_unwanted, outages;
  };
  std::unique_ptr<ClusterFamilies> cluster;
  std::mutex scrape_mu;  // render() runs one at a time: the mirrored totals and the gauges are set there
};

Metrics::Metrics(size_t max_series) : f_(std::make_unique<Families>(max_series)) {}
Metrics::~Metrics() = default;

void Metrics::connection_opened() { f_->connections.add({}); }

void Metrics::produced(std::string_view realm, std::string_view event) { f_->produced.add({event, realm}); }

void Metrics::delivered(std::string_view realm, std::string_view event, uint64_t copies) {
  f_->delivered.add({event, realm}, static_cast<double>(copies));
  f_->deliveries.Increment(static_cast<double>(copies));
}

void Metrics::rate_limited(std::string_view reason) { f_->rate_limited.add({reason}); }

void Metrics::sse_stream_opened(std::string_view realm) { f_->sse.add({realm}); }

void Metrics::stored(std::string_view realm) { f_->queued.add({realm}); }

void Metrics::sent(std::string_view realm, std::string_view key) { delivered(realm, key); }

void Metrics::ack_timed_out(std::string_view realm) { f_->ack_timeouts.add({realm}); }

void Metrics::dead_lettered(std::string_view realm) { f_->dlq.add({realm}); }

Metrics::Totals Metrics::totals() const {
  Totals t;
  t.produced = static_cast<uint64_t>(f_->produced.total());
  t.delivered = static_cast<uint64_t>(f_->delivered.total());
  auto h = f_->store_writes.Collect().histogram;
  t.store_writes = h.sample_count;
  t.store_write_seconds = h.sample_sum;
  t.last_store_write_ns = last_store_write_ns_.load(std::memory_order_relaxed);
  return t;
}

void Metrics::store_write(std::chrono::nanoseconds took) {
  last_store_write_ns_.store(static_cast<uint64_t>(took.count()), std::memory_order_relaxed);
  f_->store_writes.Observe(std::chrono::duration<double>(took).count());
}

std::string Metrics::render(const Now& now) {
  std::lock_guard lock(f_->scrape_mu);
  Families& f = *f_;
  f.connections_current.Set(static_cast<double>(now.connections_current));
  f.slow_consumers.update(now.slow_consumers);
  // Worker gauges are made once per worker index (the pool's size is fixed).
  for (size_t i = f.worker_gauges.size(); i < now.worker_sessions.size(); ++i)
    f.worker_gauges.push_back(&f.worker_sessions.Add({{"worker", std::to_string(i)}}));
  for (size_t i = 0; i < now.worker_sessions.size(); ++i) f.worker_gauges[i]->Set(static_cast<double>(now.worker_sessions[i]));
  if (const broker::QueueStats* q = now.queues) {
    f.stored.update(q->enqueued);
    f.acked.update(q->acked);
    f.redelivered.update(q->redelivered);
    f.dead_lettered.update(q->dead_lettered);
    f.expired.update(q->expired);
    f.dropped.update(q->dropped_over_cap);
    f.queued_now.Set(static_cast<double>(q->queued));
    f.in_flight.Set(static_cast<double>(q->in_flight));
    f.dead_now.Set(static_cast<double>(q->dead));
  }
  if (const cluster::LinkStats* c = now.cluster) {
    if (!f.cluster) f.cluster = std::make_unique<Families::ClusterFamilies>(*f.registry);
    Families::ClusterFamilies& k = *f.cluster;
    k.connected.Set(c->connected ? 1 : 0);
    k.peers.Set(static_cast<double>(c->peers));
    k.interest_terms.Set(static_cast<double>(c->interest_terms));
    k.reference_mode.Set(c->reference_mode ? 1 : 0);
    k.relayed_out.update(c->relayed_out);
    k.relayed_in.update(c->relayed_in);
    k.relay_dropped.update(c->relay_dropped);
    k.relay_refused.update(c->relay_refused);
    k.relay_unwanted.update(c->relay_unwanted);
    k.outages.update(c->outages);
  }
  auto families = f.registry->Collect();
  // A family none of whose series was ever incremented is left out, HELP and TYPE lines included.
  std::erase_if(families, [](const prometheus::MetricFamily& m) { return m.metric.empty(); });
  families.push_back(read_to_write_family());
  std::ostringstream out;
  prometheus::TextSerializer().Serialize(out, families);
  return std::move(out).str();
}

Metrics& process_metrics() {
  static Metrics metrics;
  return metrics;
}

}  // namespace siomq::surfaces::http
