// Durable queues moving between nodes (broker/queue_moves.cc): two DurableQueues, each on a file store of
// its own, stand for two nodes; a consumer's queues are released by one, adopted by the other, and
// forgotten by the first. The Redis part (sections, homes) is covered end to end (cluster_durable.test.js).
#include <gtest/gtest.h>

#include <future>

#include "broker/broker.h"
#include "broker/durable_queues.h"
#include "fake_endpoint.h"
#include "store/writer.h"
#include "surfaces/tyo_mq/stored_subscription.h"
#include "temp_store.h"

namespace siomq::broker {
namespace {

using namespace std::chrono_literals;

QueueOptions with_shards(size_t shards) {
  QueueOptions o;
  o.shards = shards;
  return o;
}

// One node's durable queues on a file store of its own.
struct Node {
  store::TempDir dir;
  std::unique_ptr<store::Backend> backend = store::open_file(dir.path().string());
  store::Writer writer{*backend, store::SyncMode::always, 0us};
  Broker broker;
  Recorder sink;
  DurableQueues queues;

  explicit Node(size_t shards = 1) : queues(broker, writer, with_shards(shards)) {
    queues.load(backend->load(), surfaces::read_subscription);
    queues.start();
  }
  ~Node() {
    queues.stop();
    writer.stop();
  }
  void subscribe(const std::string& consumer) {
    auto s = spec(consumer, ack_policy());
    broker.with_realm("default", [&](RealmRegistry& r) { r.restore(s); });
    queues.save_subscription(surfaces::durable_subscription("default", s));
  }
  void enqueue(const std::string& consumer, int n, std::optional<int64_t> ttl_ms = std::nullopt) {
    for (int i = 0; i < n; ++i) {
      auto m = std::make_shared<StoredMessage>();
      m->payload = "{\"n\":" + std::to_string(i) + "}";
      m->producer = "p";
      m->ttl_ms = ttl_ms;
      std::promise<void> done;
      queues.enqueue(m, {QueueCopy{"default", "p-e", consumer, consumer, spec(consumer, ack_policy()).policy}},
                     [&](size_t, const Status&) { done.set_value(); });
      done.get_future().get();
    }
  }
  DurableQueues::Moved release(const std::string& consumer) {
    std::promise<DurableQueues::Moved> out;
    queues.release("default", consumer, [&](DurableQueues::Moved m) { out.set_value(std::move(m)); });
    return out.get_future().get();
  }
  std::vector<DurableSubscription> adopt(store::Backend::Contents contents) {
    std::promise<std::vector<DurableSubscription>> out;
    queues.adopt(std::move(contents), surfaces::read_subscription,
                 [&](const Status& s, std::vector<DurableSubscription> subs) {
                   EXPECT_TRUE(s.ok());
                   out.set_value(std::move(subs));
                 });
    return out.get_future().get();
  }
  void forget(DurableQueues::Moved moved) {
    std::promise<void> done;
    queues.forget(std::move(moved), [&](const Status& s) {
      EXPECT_TRUE(s.ok());
      done.set_value();
    });
    done.get_future().get();
  }
  QueueStats stats() {
    std::promise<QueueStats> out;
    queues.stats([&](const QueueStats& s) { out.set_value(s); });
    return out.get_future().get();
  }
  EndpointPtr online(const std::string& consumer, const std::string& socket) {
    auto e = std::make_shared<RecordingEndpoint>(socket, sink);
    broker.with_realm("default", [&](RealmRegistry& r) { return r.register_consumer(consumer, consumer, e); });
    return e;
  }
  // What the store holds now, read back (the writer syncs each write: it is all there).
  store::Backend::Contents stored() { return backend->load(); }
};


// Each test runs with one queues thread on the first node and two on the other, and with three and four:
// the nodes' shard counts differ, as a cluster's may.
class QueueMoves : public ::testing::TestWithParam<size_t> {};
INSTANTIATE_TEST_SUITE_P(Shards, QueueMoves, ::testing::Values(1, 3),
                         [](const ::testing::TestParamInfo<size_t>& p) { return std::to_string(p.param) + "shards"; });

TEST_P(QueueMoves, AConsumersQueuesMoveWholeInOrderAndTheOthersStay) {
  Node a{GetParam()}, b{GetParam() + 1};
  a.subscribe("x");
  a.subscribe("y");
  a.enqueue("x", 5);
  a.enqueue("y", 2);

  auto moved = a.release("x");
  ASSERT_EQ(moved.rows.size(), 5u);
  ASSERT_EQ(moved.subscriptions.size(), 1u);
  EXPECT_EQ(moved.subscriptions[0].consumer, "x");
  EXPECT_EQ(a.stats().queued, 2u);  // y's stay
  // Released, not yet forgotten: the records are still in A's store (a crash now loses nothing).
  EXPECT_EQ(a.stored().rows.size(), 7u);

  auto subs = b.adopt(moved);
  ASSERT_EQ(subs.size(), 1u);
  EXPECT_EQ(subs[0].consumer, "x");
  EXPECT_TRUE(subs[0].policy.ack);
  EXPECT_EQ(b.stats().queued, 5u);
  EXPECT_EQ(b.stored().rows.size(), 5u);
  EXPECT_EQ(b.stored().subscriptions.size(), 1u);

  a.forget(moved);
  auto left = a.stored();
  EXPECT_EQ(left.rows.size(), 2u);
  ASSERT_EQ(left.subscriptions.size(), 1u);
  EXPECT_EQ(left.subscriptions[0].consumer, "y");

  // The consumer online on B gets them in order with the ids they had, and its ACKs work there.
  surfaces::restore_subscriptions(b.broker, subs);
  auto x = b.online("x", "s1");
  b.queues.replay(QueueCopy{"default", "p-e", "x", "x", spec("x", ack_policy()).policy}, x);
  auto sent = b.sink.wait_for(5);
  ASSERT_EQ(sent.size(), 5u);
  for (size_t i = 0; i < sent.size(); ++i) {
    EXPECT_NE(sent[i].payload.find("\"n\":" + std::to_string(i)), std::string::npos) << sent[i].payload;
    EXPECT_EQ(msg_id(sent[i].payload), moved.rows[i].id);
    std::promise<int> code;
    b.queues.ack("default", "s1", moved.rows[i].id, [&](int c, const std::string&) { code.set_value(c); });
    EXPECT_EQ(code.get_future().get(), 200);
  }
  EXPECT_EQ(b.stored().rows.size(), 0u);
}

TEST_P(QueueMoves, AdoptingTheSameRecordsTwiceKeepsOneCopyAndExpiredRowsAreDropped) {
  Node a{GetParam()}, b{GetParam() + 1};
  a.subscribe("x");
  a.enqueue("x", 3);
  auto moved = a.release("x");
  b.adopt(moved);
  // An adoption repeated (its adopter died before it erased the section): nothing twice.
  b.adopt(moved);
  EXPECT_EQ(b.stats().queued, 3u);
  EXPECT_EQ(b.stored().rows.size(), 3u);

  auto expired = moved;
  for (auto& row : expired.rows) {
    row.id += "-other";
    row.expires_ms = 1;  // long past
  }
  b.adopt(expired);
  EXPECT_EQ(b.stats().queued, 3u);
}

TEST_P(QueueMoves, ASubscriptionMadeAgainBeforeTheForgetIsKept) {
  Node a{GetParam()};
  a.subscribe("x");
  a.enqueue("x", 1);
  auto moved = a.release("x");
  a.subscribe("x");  // the consumer came back here before the move finished
  a.forget(moved);
  auto left = a.stored();
  EXPECT_EQ(left.rows.size(), 0u);
  EXPECT_EQ(left.subscriptions.size(), 1u);
}

TEST_P(QueueMoves, ASubscriptionTheConsumerMadeOnTheAdopterWinsOverTheAdoptedOne) {
  Node a{GetParam()}, b{GetParam() + 1};
  a.subscribe("x");
  a.enqueue("x", 2);
  auto moved = a.release("x");
  // On B the consumer subscribed without ACK mode meanwhile: B's record and policy stay.
  auto mine = spec("x", ack_policy());
  mine.policy = DeliveryPolicy{};
  b.broker.with_realm("default", [&](RealmRegistry& r) { r.restore(mine); });
  b.queues.save_subscription(surfaces::durable_subscription("default", mine));
  auto subs = b.adopt(moved);
  EXPECT_TRUE(subs.empty());  // nothing to restore: B has it
  auto held = b.stored();
  ASSERT_EQ(held.subscriptions.size(), 1u);
  auto read = surfaces::read_subscription(held.subscriptions[0]);
  ASSERT_TRUE(read);
  EXPECT_FALSE(read->policy.ack);
  EXPECT_EQ(held.rows.size(), 2u);
  // And the copies reach the consumer online on B, without ACK mode.
  auto x = b.online("x", "s1");
  b.queues.replay(QueueCopy{"default", "p-e", "x", "x", DeliveryPolicy{}}, x);
  auto sent = b.sink.wait_for(2);
  ASSERT_EQ(sent.size(), 2u);
  EXPECT_EQ(msg_id(sent[0].payload), "");  // no ACK fields
}

TEST_P(QueueMoves, ReleasingAConsumerWithNothingHereMovesNothing) {
  Node a{GetParam()};
  a.subscribe("y");
  a.enqueue("y", 1);  // written after the subscription: both are in the store once it is confirmed
  auto moved = a.release("x");
  EXPECT_TRUE(moved.rows.empty());
  EXPECT_TRUE(moved.subscriptions.empty());
  EXPECT_EQ(a.stored().subscriptions.size(), 1u);
}

}  // namespace
}  // namespace siomq::broker
