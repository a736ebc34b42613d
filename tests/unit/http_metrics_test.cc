// The HTTP API's metrics (surfaces/http/metrics.h, bounded_counters.h): the label-set bound with its
// "__other__" series, series that appear only once incremented, counting from several threads, and the
// SSE stream counts /api/stats reads.
#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

#include "broker/durable_queues.h"
#include "net/write_latency.h"
#include "surfaces/http/metrics.h"

namespace siomq::surfaces::http {
namespace {

size_t count_lines(const std::string& text, const std::string& prefix) {
  size_t n = 0, at = 0;
  while ((at = text.find("\n" + prefix, at)) != std::string::npos) {
    ++n;
    ++at;
  }
  return n + (text.starts_with(prefix) ? 1 : 0);
}

TEST(HttpMetrics, NothingOfAFamilyIsWrittenBeforeItsFirstIncrement) {
  Metrics m(10);
  std::string text = m.render({});
  EXPECT_EQ(text.find("tyo_mq_messages_produced_total"), std::string::npos);
  EXPECT_NE(text.find("tyo_mq_connections_current 0"), std::string::npos);
  m.produced("r", "e");
  text = m.render({});
  EXPECT_NE(text.find("tyo_mq_messages_produced_total{event=\"e\",realm=\"r\"} 1"), std::string::npos) << text;
}

TEST(HttpMetrics, LabelSetsPastTheCapAndLongValuesCountAsOther) {
  Metrics m(3);
  for (int i = 0; i < 5; ++i) m.produced("r", "e" + std::to_string(i));
  m.produced("r", "e0");
  m.produced(std::string(300, 'x'), "e0");
  m.produced("r", "e4");
  std::string text = m.render({});
  EXPECT_EQ(count_lines(text, "tyo_mq_messages_produced_total{"), 4u) << text;
  EXPECT_NE(text.find("tyo_mq_messages_produced_total{event=\"e0\",realm=\"r\"} 2"), std::string::npos) << text;
  EXPECT_NE(text.find("tyo_mq_messages_produced_total{event=\"__other__\",realm=\"__other__\"} 4"), std::string::npos) << text;
}

TEST(HttpMetrics, CountsFromManyThreadsAddUp) {
  Metrics m(100);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&m, t] {
      for (int i = 0; i < 10000; ++i) m.delivered("r" + std::to_string(i % 2), "k", 1);
      m.rate_limited(t % 2 ? "a" : "b");
    });
  }
  for (auto& t : threads) t.join();
  std::string text = m.render({});
  EXPECT_NE(text.find("tyo_mq_messages_delivered_total{event=\"k\",realm=\"r0\"} 20000"), std::string::npos) << text;
  EXPECT_NE(text.find("tyo_mq_messages_delivered_total{event=\"k\",realm=\"r1\"} 20000"), std::string::npos) << text;
  EXPECT_NE(text.find("siomq_deliveries_total 40000"), std::string::npos) << text;
  EXPECT_NE(text.find("tyo_mq_rate_limited_total{reason=\"a\"} 2"), std::string::npos) << text;
}

TEST(HttpMetrics, QueueTotalsAreMirroredAndScrapeTimeValuesSet) {
  Metrics m;
  broker::QueueStats q;
  q.enqueued = 5;
  q.queued = 3;
  Metrics::Now now;
  now.queues = &q;
  now.worker_sessions = {2, 1};
  now.slow_consumers = 4;
  m.render(now);
  q.enqueued = 7;
  std::string text = m.render(now);
  EXPECT_NE(text.find("siomq_messages_stored_total 7"), std::string::npos) << text;
  EXPECT_NE(text.find("siomq_messages_queued 3"), std::string::npos) << text;
  EXPECT_NE(text.find("siomq_worker_sessions{worker=\"0\"} 2"), std::string::npos) << text;
  EXPECT_NE(text.find("siomq_slow_consumers_total 4"), std::string::npos) << text;
}

TEST(HttpMetrics, SseStreamsAreCountedPerRealm) {
  Metrics m;
  m.sse_stream_opened("a");
  m.sse_stream_opened("a");
  m.sse_stream_opened("b");
  EXPECT_NE(m.render({}).find("tyo_mq_sse_connections_total{realm=\"b\"} 1"), std::string::npos);
  EXPECT_NE(m.render({}).find("tyo_mq_sse_connections_total{realm=\"a\"} 2"), std::string::npos);
}

// siomq_read_to_write_seconds (net/write_latency.h): a frame written `took` µs after its read lands in
// the first bucket whose bound is >= took; unstamped frames are not counted; a thread's counts outlive it;
// the stamp's wrap at 2^32 µs does not make a span negative.
TEST(HttpMetrics, ReadToWriteLatencyBucketsAndThreads) {
  const net::WriteLatency before = net::write_latency();
  std::thread writer([] {
    net::record_write(1000, 1005);              // 5 µs: the 5 µs bucket (<=)
    net::record_write(1000, 1006);              // 6 µs: the 10 µs bucket
    net::record_write(0, 99);                   // no stamp: not counted
    net::record_write(0xFFFFFFF0u, 0x10);       // 32 µs across the wrap: the 40 µs bucket
    net::record_write(1, 1 + 5'000'000);        // 5 s: past the last bound
  });
  writer.join();  // its counts are folded into the retired ones
  const net::WriteLatency after = net::write_latency();
  auto added = [&](size_t i) { return after.buckets[i] - before.buckets[i]; };
  EXPECT_EQ(after.count - before.count, 4u);
  EXPECT_EQ(added(0), 1u);  // le 5 µs
  EXPECT_EQ(added(1), 1u);  // le 10 µs
  EXPECT_EQ(added(4), 1u);  // le 40 µs
  EXPECT_EQ(added(net::kWriteLatencyBoundsUs.size()), 1u);  // +Inf
  EXPECT_EQ(after.sum_us - before.sum_us, 5u + 6u + 32u + 5'000'000u);
  {
    net::ReadStamp stamp;
    EXPECT_NE(net::read_stamp(), 0u);
  }
  EXPECT_EQ(net::read_stamp(), 0u);
  const std::string text = Metrics(10).render({});
  EXPECT_NE(text.find("# TYPE siomq_read_to_write_seconds histogram"), std::string::npos) << text;
  EXPECT_NE(text.find("siomq_read_to_write_seconds_bucket{le=\"5e-06\"}"), std::string::npos) << text;
  EXPECT_NE(text.find("siomq_read_to_write_seconds_bucket{le=\"+Inf\"}"), std::string::npos) << text;
}

}  // namespace
}  // namespace siomq::surfaces::http
