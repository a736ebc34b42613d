// The streams engine (broker/streams.h) against a store that fails or holds its writes: what is answered,
// and what stays, when the store does not keep up. (Its behaviour over the wire is tests/e2e/bus_*.)
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>

#include "broker/broker.h"
#include "controlled_backend.h"
#include "broker/streams.h"
#include "store/writer.h"

namespace siomq::broker {
namespace {

using namespace std::chrono_literals;

using test_support::ControlledBackend;

template <class T>
std::pair<std::function<void(Result<T>)>, std::future<Result<T>>> answer() {
  auto p = std::make_shared<std::promise<Result<T>>>();
  return {[p](Result<T> r) { p->set_value(std::move(r)); }, p->get_future()};
}

template <class T>
Result<T> wait(std::future<Result<T>>& f) {
  if (f.wait_for(5s) != std::future_status::ready) return Error{-1, "never answered"};
  return f.get();
}

struct Engine {
  ControlledBackend backend;
  Broker broker;
  store::Writer writer{backend, store::SyncMode::always, std::chrono::microseconds(0)};
  Streams streams;
  explicit Engine(StreamsOptions options = {}) : streams(broker, writer, options) { streams.start(); }
  ~Engine() {
    backend.set(ControlledBackend::Mode::ok);
    streams.stop();
    writer.stop();
  }
  template <class T, class F>
  Result<T> call(F&& f) {
    auto [done, fut] = answer<T>();
    f(done);
    return wait(fut);
  }
  Result<std::vector<BusMessagePtr>> pull(size_t batch) {
    return call<std::vector<BusMessagePtr>>([&](auto done) { streams.pull("r", PullRequest{"c", batch, 0, true}, done); });
  }
  Result<Ok> ack(uint64_t seq) {
    return call<Ok>([&](auto done) { streams.acknowledge("r", "c", seq, Streams::AckKind::ack, 0, "", done); });
  }
  Result<PublishAck> publish(std::string subject) {
    return call<PublishAck>([&](auto done) {
      streams.publish("r", PublishRequest{std::move(subject), "", "data", "", "", std::nullopt, std::nullopt}, done);
    });
  }
};

StreamConfig stream_config(std::string json) { return parse_stream_config(json).value(); }

// Regression (review of issue 15): a message whose write failed stayed in the log, and a consumer could
// get it after a later write succeeded.
TEST(Streams, AMessageWhoseWriteFailedIsTakenBack) {
  Engine e;
  ASSERT_TRUE(e.call<StreamInfo>([&](auto done) { e.streams.create("r", stream_config(R"({"name":"S"})"), false, done); }));
  e.backend.set(ControlledBackend::Mode::fail);
  auto failed = e.publish("S");
  ASSERT_FALSE(failed);
  EXPECT_EQ(failed.error().code, 500);
  e.backend.set(ControlledBackend::Mode::ok);
  auto next = e.publish("S");
  ASSERT_TRUE(next);
  EXPECT_EQ(next->seq, 2u) << "seqs are never reused";
  auto info = e.call<StreamInfo>([&](auto done) { e.streams.info("r", "S", done); });
  ASSERT_TRUE(info);
  EXPECT_EQ(info->state.messages, 1u);
  EXPECT_EQ(info->state.first_seq, 2u);
}

// Regression (review of issue 15): an ack waiting for the consumer's next record write was never
// answered when the consumer was deleted before that write.
TEST(Streams, DeletingAConsumerAnswersWhatWaitsForItsRecord) {
  Engine e;
  ASSERT_TRUE(e.call<StreamInfo>([&](auto done) { e.streams.create("r", stream_config(R"({"name":"S"})"), false, done); }));
  ASSERT_TRUE(e.publish("S"));
  ASSERT_TRUE(e.publish("S"));
  ConsumerConfig c = parse_consumer_config(R"({"stream":"S","name":"c"})").value();
  ASSERT_TRUE(e.call<ConsumerInfo>([&](auto done) { e.streams.add_consumer("r", c, done); }));
  auto pulled = e.call<std::vector<BusMessagePtr>>([&](auto done) { e.streams.pull("r", PullRequest{"c", 2, 0, true}, done); });
  ASSERT_TRUE(pulled);
  ASSERT_EQ(pulled->size(), 2u);
  e.backend.set(ControlledBackend::Mode::hold);
  auto [ack1, first] = answer<Ok>();
  auto [ack2, second] = answer<Ok>();
  auto [gone, deleted] = answer<Ok>();
  e.streams.acknowledge("r", "c", 1, Streams::AckKind::ack, 0, "", ack1);  // its record write is held
  e.streams.acknowledge("r", "c", 2, Streams::AckKind::ack, 0, "", ack2);  // waits for the next write
  e.streams.remove_consumer("r", "S", "c", gone);
  std::this_thread::sleep_for(100ms);
  e.backend.set(ControlledBackend::Mode::ok);
  EXPECT_TRUE(wait(first));
  auto r2 = wait(second);
  ASSERT_FALSE(r2);
  EXPECT_EQ(r2.error().code, 404);
  EXPECT_TRUE(wait(deleted));
}

// Regression (security review of issue 15): max_ack_pending -1 let one consumer track any number of
// unacked deliveries, each in memory and in its record (rewritten whole per change).
TEST(Streams, NoAckPendingLimitMeansTheServersCap) {
  Engine e;
  ASSERT_TRUE(e.call<StreamInfo>([&](auto done) {
    e.streams.create("r", stream_config(R"({"name":"S","storage":"memory"})"), false, done);
  }));
  const size_t cap = static_cast<size_t>(kMaxAckPendingLimit);
  for (size_t i = 0; i < cap + 5; ++i) ASSERT_TRUE(e.publish("S"));
  ConsumerConfig c = parse_consumer_config(R"({"stream":"S","name":"c","max_ack_pending":-1})").value();
  ASSERT_TRUE(e.call<ConsumerInfo>([&](auto done) { e.streams.add_consumer("r", c, done); }));
  size_t out = 0;
  for (;;) {
    auto pulled = e.pull(1000);
    ASSERT_TRUE(pulled);
    if (pulled->empty()) break;
    out += pulled->size();
  }
  EXPECT_EQ(out, cap);
  ASSERT_TRUE(e.ack(1));
  auto more = e.pull(1000);
  ASSERT_TRUE(more);
  EXPECT_EQ(more->size(), 1u) << "an ack makes room for one more";
}

// Regression (security review of issue 15): unacked deliveries took memory outside every budget. Now
// each counts kPendingEntryBytes against the realm's stream bytes: deliveries stop, and publishes are
// refused, when the realm is full; acks give the room back.
TEST(Streams, UnackedDeliveriesCountAgainstTheRealmsBytes) {
  const uint64_t message = 2 * 1 + 4 + kStreamMessageOverhead;  // subject "S", data "data"
  const uint64_t entry = 192;  // Streams::State::kPendingEntryBytes
  StreamsOptions options;
  options.max_bytes_per_realm = 10 * message + 3 * entry;
  Engine e(options);
  ASSERT_TRUE(e.call<StreamInfo>([&](auto done) {
    e.streams.create("r", stream_config(R"({"name":"S","storage":"memory"})"), false, done);
  }));
  for (int i = 0; i < 10; ++i) ASSERT_TRUE(e.publish("S"));
  ConsumerConfig c = parse_consumer_config(R"({"stream":"S","name":"c"})").value();
  ASSERT_TRUE(e.call<ConsumerInfo>([&](auto done) { e.streams.add_consumer("r", c, done); }));
  auto pulled = e.pull(10);
  ASSERT_TRUE(pulled);
  EXPECT_EQ(pulled->size(), 3u) << "room for three unacked deliveries";
  auto refused = e.publish("S");
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, 503);
  ASSERT_TRUE(e.ack(1));
  auto again = e.pull(10);
  ASSERT_TRUE(again);
  EXPECT_EQ(again->size(), 1u) << "an ack gives its room back";
}

// Regression (security review of issue 15): waiting pulls were bounded per consumer only (1,000), so a
// realm with 1,000 consumers could hold a million, each with its answer and its requester's socket.
TEST(Streams, WaitingPullsAreBoundedPerRealm) {
  Engine e;
  ASSERT_TRUE(e.call<StreamInfo>([&](auto done) {
    e.streams.create("r", stream_config(R"({"name":"S","storage":"memory"})"), false, done);
  }));
  for (int i = 0; i <= 10; ++i) {
    ConsumerConfig c = parse_consumer_config(R"({"stream":"S","name":"c)" + std::to_string(i) + R"("})").value();
    ASSERT_TRUE(e.call<ConsumerInfo>([&](auto done) { e.streams.add_consumer("r", c, done); }));
  }
  auto refused = std::make_shared<std::atomic<int>>(0);
  for (int i = 0; i < 10000; ++i) {
    e.streams.pull("r", PullRequest{"c" + std::to_string(i / 1000), 1, 60000, false},
                   [refused](Result<std::vector<BusMessagePtr>> r) {
                     if (!r) ++*refused;
                   });
  }
  auto over = e.call<std::vector<BusMessagePtr>>([&](auto done) { e.streams.pull("r", PullRequest{"c10", 1, 60000, false}, done); });
  ASSERT_FALSE(over);
  EXPECT_EQ(over.error().code, 429);
  EXPECT_EQ(over.error().message, "too many pulls waiting in this realm");
  EXPECT_EQ(refused->load(), 0);
  // A message answers the first pull of each of the ten consumers with pulls waiting: room for ten more,
  // taken again by one more pull on each of them (they have had the message: they wait).
  ASSERT_TRUE(e.publish("S"));
  for (int i = 0; i < 10; ++i) {
    e.streams.pull("r", PullRequest{"c" + std::to_string(i), 1, 60000, false}, [refused](Result<std::vector<BusMessagePtr>> r) {
      if (!r) ++*refused;
    });
  }
  ConsumerConfig late = parse_consumer_config(R"({"stream":"S","name":"late","deliver_policy":"new"})").value();
  ASSERT_TRUE(e.call<ConsumerInfo>([&](auto done) { e.streams.add_consumer("r", late, done); }));
  auto full = e.call<std::vector<BusMessagePtr>>([&](auto done) { e.streams.pull("r", PullRequest{"late", 1, 60000, false}, done); });
  ASSERT_FALSE(full);
  EXPECT_EQ(full.error().code, 429);
  EXPECT_EQ(refused->load(), 0);
}

}  // namespace
}  // namespace siomq::broker
