// The server's Prometheus metrics (tyo-mq §9's /api/metrics): the reference's counters under their names
// and labels, and siomq's own under `siomq_`, kept in a prometheus-cpp registry and written by its text
// serializer.
//
// The reference's (a series appears at its first increment; labels sorted by name):
//   tyo_mq_connections_total, tyo_mq_messages_produced_total{event,realm},
//   tyo_mq_messages_delivered_total{event,realm}, tyo_mq_messages_queued_total{realm},
//   tyo_mq_messages_dlq_total{realm}, tyo_mq_ack_timeout_total{realm}, tyo_mq_rate_limited_total{reason},
//   tyo_mq_sse_connections_total{realm}, and the gauge tyo_mq_connections_current.
// `event` and `realm` come from clients: each family keeps at most max_series label sets, the rest count
// under "__other__" (bounded_counters.h).
// siomq's (always present): siomq_deliveries_total, siomq_messages_{stored,acked,redelivered,
// dead_lettered,expired,dropped}_total, the gauges siomq_messages_queued, siomq_messages_in_flight,
// siomq_dead_letters, siomq_worker_sessions{worker}, siomq_slow_consumers_total and the histogram
// siomq_store_write_seconds, and siomq_read_to_write_seconds (net/write_latency.h: a message's time in
// the server, from its read to the write of each delivery or answer it caused). On a node in a cluster (only there): siomq_cluster_connected,
// siomq_cluster_{relayed_out,relayed_in,relay_dropped,relay_refused,relay_unwanted,outages}_total and the
// gauges siomq_cluster_peers, siomq_cluster_interest_terms, siomq_cluster_reference_mode.
//
// One per process (process_metrics()): the counters describe the process, like a Prometheus client's
// default registry. The tyo-mq surface, the SSE streams, the durable queues (as their QueueObserver) and
// the store writer count into it; the HTTP API renders it.
//
// Threading: every counting function from any thread, cheap on the hot path (a per-thread cached series,
// an atomic add; no lock once warm). render() from any thread (scrapes are serialized by a lock).
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "broker/queue_observer.h"

namespace siomq::broker {
struct QueueStats;
}
namespace siomq::cluster {
struct LinkStats;
}

namespace siomq::surfaces::http {

// Distinct label sets each client-labelled family keeps before counting under "__other__".
inline constexpr size_t kMaxSeriesPerMetric = 1000;

class Metrics : public broker::QueueObserver {
 public:
  explicit Metrics(size_t max_series = kMaxSeriesPerMetric);
  ~Metrics() override;
  Metrics(const Metrics&) = delete;
  Metrics& operator=(const Metrics&) = delete;

  // A Socket.IO connection on "/".
  void connection_opened();
  // A PRODUCE (any route: socket, HTTP) in `realm`.
  void produced(std::string_view realm, std::string_view event);
  // `copies` live copies sent under the subscription key `event` in `realm`.
  void delivered(std::string_view realm, std::string_view event, uint64_t copies = 1);
  // A refusal by a limit (§11.1's reason names); every refusal counts, not only those told to the client.
  void rate_limited(std::string_view reason);
  // An SSE stream opened in `realm` (tyo_mq_sse_connections_total{realm}). Open streams are counted in
  // /api/stats as the realm's consumers they are.
  void sse_stream_opened(std::string_view realm);

  // broker::QueueObserver (the durable queues' threads).
  void stored(std::string_view realm) override;
  void sent(std::string_view realm, std::string_view key) override;
  void ack_timed_out(std::string_view realm) override;
  void dead_lettered(std::string_view realm) override;

  // One group write of the store writer (its thread).
  void store_write(std::chrono::nanoseconds took);

  // Running totals, for the web console's overview (any thread; O(series)).
  struct Totals {
    uint64_t produced = 0, delivered = 0;    // tyo_mq_messages_{produced,delivered}_total, every series
    uint64_t store_writes = 0;               // siomq_store_write_seconds' count
    double store_write_seconds = 0;          // and sum
    uint64_t last_store_write_ns = 0;        // the latest group write's time
  };
  Totals totals() const;

  // What is read at scrape time rather than counted as it happens.
  struct Now {
    size_t connections_current = 0;        // Engine.IO sessions open
    std::vector<size_t> worker_sessions;   // by worker
    uint64_t slow_consumers = 0;           // sessions closed as slow consumers since start
    const broker::QueueStats* queues = nullptr;
    const cluster::LinkStats* cluster = nullptr;  // on a node in a cluster only
  };
  // The Prometheus text format (0.0.4) of every family with at least one series. Linear in the series.
  std::string render(const Now& now);

 private:
  struct Families;
  std::unique_ptr<Families> f_;
  std::atomic<uint64_t> last_store_write_ns_{0};
};

// The process's metrics.
Metrics& process_metrics();

}  // namespace siomq::surfaces::http
