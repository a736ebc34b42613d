// siomq::bus::Conn against a real siomq-server: every public call, the errors the server answers with,
// and subscriptions that come back by themselves after the server restarts.
#include <gtest/gtest.h>

#include "client_test_util.h"
#include "server_process.h"
#include "siomq/bus.h"

namespace siomq::test {
namespace {

using namespace std::chrono_literals;
using bus::Conn;
using bus::Message;

class BusClient : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string error;
    ASSERT_TRUE(server_.start(&error)) << error;
  }
  void TearDown() override { EXPECT_EQ(server_.sanitizer_report(), ""); }

  bus::DialOptions options() {
    bus::DialOptions o;
    o.urls = {server_.url()};
    o.reconnect.initial_delay = 50ms;
    o.reconnect.max_delay = 500ms;
    return o;
  }

  std::unique_ptr<Conn> dial() {
    auto c = Conn::dial(options());
    EXPECT_TRUE(c.ok()) << (c.ok() ? "" : c.error().message);
    return c.ok() ? std::move(c.value()) : nullptr;
  }

  ServerProcess server_;
};

TEST_F(BusClient, PublishSubscribeQueueGroupsAndUnsubscribe) {
  Inbox<Message> plain, q1, q2;
  auto a = dial();
  auto b = dial();
  ASSERT_TRUE(a && b);
  auto s1 = a->subscribe("orders.*", "", [&](const Message& m) { plain.push(m); }).get();
  ASSERT_TRUE(s1.ok()) << s1.error().message;
  EXPECT_EQ(s1->subject(), "orders.*");
  auto s2 = a->subscribe("orders.>", "workers", [&](const Message& m) { q1.push(m); }).get();
  auto s3 = b->subscribe("orders.>", "workers", [&](const Message& m) { q2.push(m); }).get();
  ASSERT_TRUE(s2.ok() && s3.ok());
  EXPECT_EQ(s3->queue(), "workers");

  std::string binary("\x00\x01\xff payload", 12);
  ASSERT_TRUE(b->publish("orders.new", binary, {{"Trace-Id", "t1"}}).ok());
  for (int i = 0; i < 19; ++i) ASSERT_TRUE(b->publish("orders.new", "m" + std::to_string(i)).ok());
  ASSERT_TRUE(plain.wait_for(20));
  auto first = plain.items()[0];
  EXPECT_EQ(first.subject, "orders.new");
  EXPECT_EQ(first.data, binary);
  ASSERT_EQ(first.header.size(), 1u);
  EXPECT_EQ(first.header[0].first, "Trace-Id");
  EXPECT_EQ(first.header[0].second, "t1");
  // One copy per message to the queue group, spread over its members.
  ASSERT_TRUE(eventually([&] { return q1.size() + q2.size() == 20; }));
  EXPECT_GT(q1.size(), 0u);
  EXPECT_GT(q2.size(), 0u);

  // Closing a subscription stops its deliveries; destroying one does too.
  ASSERT_TRUE(s1->close().ok());
  { auto gone = std::move(s2.value()); }
  ASSERT_TRUE(a->publish("orders.late", "x").ok());  // after a's unsubs on the same connection
  ASSERT_TRUE(eventually([&] { return q1.size() + q2.size() == 21; }));
  std::this_thread::sleep_for(200ms);
  EXPECT_EQ(plain.size(), 20u);
  EXPECT_EQ(q1.size() + q2.size(), 21u);  // only b's member is left in the group
}

TEST_F(BusClient, RequestReplyNoRespondersAndTimeout) {
  auto server_side = dial();
  auto client = dial();
  ASSERT_TRUE(server_side && client);
  auto responder = server_side->subscribe("svc.echo", "", [&](const Message& m) {
    (void)server_side->publish(m.reply, "echo:" + m.data);
  }).get();
  ASSERT_TRUE(responder.ok());
  auto reply = client->request("svc.echo", "hi", 2000ms).get();
  ASSERT_TRUE(reply.ok()) << reply.error().message;
  EXPECT_EQ(reply->data, "echo:hi");

  auto none = client->request("svc.nobody", "hi", 2000ms).get();
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.error().code, 503);

  auto silent = server_side->subscribe("svc.silent", "", [](const Message&) {}).get();
  ASSERT_TRUE(silent.ok());
  auto late = client->request("svc.silent", "hi", 300ms).get();
  ASSERT_FALSE(late.ok());
  EXPECT_EQ(late.error().code, 408);

  auto bad = client->request("svc.*", "hi").get();  // a wildcard is no subject to publish to
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().code, 400);
}

TEST_F(BusClient, StreamsCreateUpdateInfoListGetPurgeDelete) {
  auto c = dial();
  ASSERT_TRUE(c);
  bus::StreamConfig cfg;
  cfg.name = "ORDERS";
  cfg.subjects = {"orders.>"};
  cfg.max_msgs_per_subject = 5;
  auto created = c->create_stream(cfg).get();
  ASSERT_TRUE(created.ok()) << created.error().message;
  EXPECT_EQ(created->name, "ORDERS");
  EXPECT_EQ(created->subjects, std::vector<std::string>{"orders.>"});
  EXPECT_GT(created->created_ms, 0);
  // The same config again is fine; another is a conflict.
  EXPECT_TRUE(c->create_stream(cfg).get().ok());
  auto other = cfg;
  other.max_msgs = 3;
  auto conflict = c->create_stream(other).get();
  ASSERT_FALSE(conflict.ok());
  EXPECT_EQ(conflict.error().code, 409);
  auto updated = c->update_stream(other).get();
  ASSERT_TRUE(updated.ok()) << updated.error().message;
  EXPECT_EQ(updated->max_msgs, 3);

  for (int i = 1; i <= 4; ++i) {
    auto ack = c->stream_publish("orders." + std::string(i % 2 ? "a" : "b"), "m" + std::to_string(i)).get();
    ASSERT_TRUE(ack.ok()) << ack.error().message;
    EXPECT_EQ(ack->stream, "ORDERS");
    EXPECT_EQ(ack->seq, static_cast<uint64_t>(i));
  }
  auto info = c->stream_info("ORDERS").get();
  ASSERT_TRUE(info.ok()) << info.error().message;
  EXPECT_EQ(info->state.messages, 3u);  // max_msgs 3 dropped the oldest
  EXPECT_EQ(info->state.first_seq, 2u);
  EXPECT_EQ(info->state.last_seq, 4u);

  auto list = c->list_streams().get();
  ASSERT_TRUE(list.ok());
  ASSERT_EQ(list->size(), 1u);
  EXPECT_EQ((*list)[0].name, "ORDERS");

  auto got = c->get_message("ORDERS", 3).get();
  ASSERT_TRUE(got.ok()) << got.error().message;
  EXPECT_EQ(got->data, "m3");
  EXPECT_EQ(got->subject, "orders.a");
  EXPECT_EQ(got->seq, 3u);
  auto last = c->get_last_message("ORDERS", "orders.b").get();
  ASSERT_TRUE(last.ok());
  EXPECT_EQ(last->data, "m4");
  auto missing = c->get_message("ORDERS", 1).get();
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code, 404);

  bus::PurgeOptions keep_one;
  keep_one.keep = 1;
  auto purged = c->purge_stream("ORDERS", keep_one).get();
  ASSERT_TRUE(purged.ok());
  EXPECT_EQ(*purged, 2u);
  ASSERT_TRUE(c->delete_stream("ORDERS").get().ok());
  auto gone = c->stream_info("ORDERS").get();
  ASSERT_FALSE(gone.ok());
  EXPECT_EQ(gone.error().code, 404);
}

TEST_F(BusClient, StreamPublishDedupAndExpectedSequences) {
  auto c = dial();
  ASSERT_TRUE(c);
  bus::StreamConfig cfg;
  cfg.name = "KV";
  cfg.subjects = {"kv.>"};
  cfg.storage = "memory";
  ASSERT_TRUE(c->create_stream(cfg).get().ok());
  bus::PublishOptions once;
  once.msg_id = "order-1";
  auto first = c->stream_publish("kv.a", "v1", once).get();
  auto again = c->stream_publish("kv.a", "v1", once).get();
  ASSERT_TRUE(first.ok() && again.ok());
  EXPECT_FALSE(first->duplicate);
  EXPECT_TRUE(again->duplicate);
  EXPECT_EQ(again->seq, first->seq);
  bus::PublishOptions header_id;
  header_id.header = {{"Msg-Id", "order-1"}};
  EXPECT_TRUE(c->stream_publish("kv.a", "v1", header_id).get()->duplicate);

  bus::PublishOptions expect;
  expect.expect_last_seq = 7;
  auto wrong = c->stream_publish("kv.b", "v", expect).get();
  ASSERT_FALSE(wrong.ok());
  EXPECT_EQ(wrong.error().code, 409);
  expect.expect_last_seq = first->seq;
  EXPECT_TRUE(c->stream_publish("kv.b", "v", expect).get().ok());
  bus::PublishOptions per_subject;
  per_subject.expect_last_subject_seq = 0;  // kv.c has nothing yet
  EXPECT_TRUE(c->stream_publish("kv.c", "v", per_subject).get().ok());
  EXPECT_EQ(code_of(c->stream_publish("kv.c", "v", per_subject).get()), 409);
  bus::PublishOptions wrong_stream;
  wrong_stream.stream = "OTHER";
  EXPECT_EQ(code_of(c->stream_publish("kv.a", "v", wrong_stream).get()), 409);
  EXPECT_EQ(code_of(c->stream_publish("nowhere.x", "v").get()), 404);
}

TEST_F(BusClient, PullConsumerAckNakTermProgress) {
  auto c = dial();
  ASSERT_TRUE(c);
  bus::StreamConfig cfg;
  cfg.name = "JOBS";
  cfg.subjects = {"jobs.*"};
  ASSERT_TRUE(c->create_stream(cfg).get().ok());
  bus::StreamConfig dlq;
  dlq.name = "JOBS_DLQ";
  dlq.subjects = {"dlq.jobs"};
  ASSERT_TRUE(c->create_stream(dlq).get().ok());
  cfg.dead_letter_stream = "JOBS_DLQ";
  ASSERT_TRUE(c->update_stream(cfg).get().ok());
  bus::ConsumerConfig cc;
  cc.stream = "JOBS";
  cc.name = "worker";
  cc.ack_wait_ms = 60000;
  auto added = c->add_consumer(cc).get();
  ASSERT_TRUE(added.ok()) << added.error().message;
  EXPECT_EQ(added->name, "worker");
  EXPECT_EQ(added->config.ack_policy, "explicit");

  for (int i = 0; i < 3; ++i) ASSERT_TRUE(c->stream_publish("jobs.x", "job" + std::to_string(i)).get().ok());
  auto batch = c->pull("worker", 10, 1000ms).get();
  ASSERT_TRUE(batch.ok()) << batch.error().message;
  ASSERT_EQ(batch->size(), 3u);
  EXPECT_EQ((*batch)[0].data, "job0");
  EXPECT_EQ((*batch)[0].delivered, 1u);
  EXPECT_EQ((*batch)[0].stream, "JOBS");

  ASSERT_TRUE(c->ack("worker", (*batch)[0].seq).get().ok());
  ASSERT_TRUE(c->progress("worker", (*batch)[1].seq).get().ok());
  ASSERT_TRUE(c->nak("worker", (*batch)[1].seq).get().ok());
  ASSERT_TRUE(c->term("worker", (*batch)[2].seq, "poison").get().ok());
  auto again = c->pull("worker", 10, 1000ms).get();
  ASSERT_TRUE(again.ok());
  ASSERT_EQ(again->size(), 1u);
  EXPECT_EQ((*again)[0].data, "job1");
  EXPECT_EQ((*again)[0].delivered, 2u);
  auto redelivering = c->consumer_info("JOBS", "worker").get();
  ASSERT_TRUE(redelivering.ok());
  EXPECT_EQ(redelivering->num_redelivered, 1u);
  EXPECT_EQ(redelivering->num_ack_pending, 1u);
  ASSERT_TRUE(c->ack("worker", (*again)[0].seq).get().ok());
  // Acking what is not pending is a 404.
  EXPECT_EQ(code_of(c->ack("worker", (*batch)[0].seq).get()), 404);
  // The termed message went to the dead-letter stream, with the headers that say why.
  auto dead = c->get_message("JOBS_DLQ", 1).get();
  ASSERT_TRUE(dead.ok()) << dead.error().message;
  EXPECT_EQ(dead->data, "job2");
  bool has_reason = false;
  for (auto& [k, v] : dead->header) has_reason |= k == "Dlq-Reason" && v == "term: poison";
  EXPECT_TRUE(has_reason);

  auto empty = c->pull("worker", 5).get();  // no wait: answered at once
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->empty());
  auto info = c->consumer_info("JOBS", "worker").get();
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->num_ack_pending, 0u);
  EXPECT_EQ(info->delivered.stream_seq, 3u);
  auto stream = c->stream_info("JOBS").get();
  ASSERT_TRUE(stream.ok());
  ASSERT_EQ(stream->consumers.size(), 1u);
  ASSERT_TRUE(c->delete_consumer("JOBS", "worker").get().ok());
  EXPECT_EQ(code_of(c->consumer_info("JOBS", "worker").get()), 404);
  EXPECT_EQ(code_of(c->pull("worker").get()), 404);
}

TEST_F(BusClient, PushConsumerDeliversToASubscription) {
  Inbox<Message> pushed;
  auto c = dial();
  ASSERT_TRUE(c);
  bus::StreamConfig cfg;
  cfg.name = "EVENTS";
  cfg.subjects = {"events.>"};
  ASSERT_TRUE(c->create_stream(cfg).get().ok());
  auto sub = c->subscribe("deliver.events", "", [&](const Message& m) {
    pushed.push(m);
    (void)c->ack(m.consumer, m.seq);
  }).get();
  ASSERT_TRUE(sub.ok());
  bus::ConsumerConfig cc;
  cc.stream = "EVENTS";
  cc.name = "pusher";
  cc.deliver_subject = "deliver.events";
  ASSERT_TRUE(c->add_consumer(cc).get().ok());
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(c->stream_publish("events.e", "e" + std::to_string(i)).get().ok());
  ASSERT_TRUE(pushed.wait_for(5));
  auto items = pushed.items();
  EXPECT_EQ(items[0].stream, "EVENTS");
  EXPECT_EQ(items[0].consumer, "pusher");
  EXPECT_EQ(items[4].data, "e4");
  EXPECT_TRUE(eventually([&] { return c->consumer_info("EVENTS", "pusher").get()->num_ack_pending == 0; }));
}

TEST_F(BusClient, StatsAndRawEmit) {
  auto c = dial();
  ASSERT_TRUE(c);
  auto s = c->subscribe("x.y", "", [](const Message&) {}).get();
  ASSERT_TRUE(s.ok());
  auto stats = c->stats().get();
  ASSERT_TRUE(stats.ok()) << stats.error().message;
  EXPECT_GE(stats->connections, 1u);
  EXPECT_GE(stats->subscriptions, 1u);
  EXPECT_FALSE(stats->version.empty());
  auto raw = c->emit("/control", "stream.list", "{}").get();
  ASSERT_TRUE(raw.ok());
  EXPECT_EQ(*raw, R"({"ok":true,"streams":[]})");
}

TEST_F(BusClient, SubscriptionsComeBackAfterTheServerRestarts) {
  Inbox<Message> got;  // before the Conn: its handlers run until it is destroyed
  Inbox<State> states;
  auto sub_conn = dial();
  ASSERT_TRUE(sub_conn);
  sub_conn->connection().on_state([&](State s, const std::string&) { states.push(s); });
  auto sub = sub_conn->subscribe("live.>", "", [&](const Message& m) { got.push(m); }).get();
  ASSERT_TRUE(sub.ok());

  server_.kill9();
  std::string error;
  ASSERT_TRUE(server_.start(&error)) << error;  // the same port, a new process
  ASSERT_TRUE(eventually([&] { return sub_conn->connected(); })) << "did not reconnect";
  auto pub = dial();
  ASSERT_TRUE(pub);
  // Subscribed again before anything buffered went out: the first publish after the reconnect arrives.
  ASSERT_TRUE(eventually([&] {
    (void)pub->publish("live.a", "after");
    return got.size() > 0;
  }, 5s));
  EXPECT_EQ(got.items()[0].data, "after");
  auto seen = states.items();
  EXPECT_NE(std::find(seen.begin(), seen.end(), State::reconnecting), seen.end());
  EXPECT_EQ(seen.back(), State::connected);
}

TEST_F(BusClient, ControlTokenRefusedAndAccepted) {
  ServerProcess guarded({R"({"bus":{"control_token":"s3cret"}})", {}, 0, {}});
  std::string error;
  ASSERT_TRUE(guarded.start(&error)) << error;
  bus::DialOptions o = options();
  o.urls = {guarded.url()};
  o.control_token = "wrong";
  auto c = Conn::dial(o);
  ASSERT_TRUE(c.ok());  // the data plane works; the control plane is refused
  auto refused = (*c)->list_streams().get();
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, errc::refused);
  EXPECT_TRUE((*c)->publish("a.b", "x").ok());
  o.control_token = "s3cret";
  auto ok = Conn::dial(o);
  ASSERT_TRUE(ok.ok());
  EXPECT_TRUE((*ok)->list_streams().get().ok());
  EXPECT_EQ(guarded.sanitizer_report(), "");
}

// Behind a proxy that refuses WebSocket, the same calls work over long-polling — binary data, acks,
// deliveries and both namespaces included; and polling can be asked for from the start.
TEST_F(BusClient, LongPollingWhenTheWebSocketUpgradeIsRefused) {
  WebSocketRefusingProxy proxy(server_.port());
  Inbox<Message> got;
  bus::DialOptions o = options();
  o.urls = {proxy.url()};
  auto polled = Conn::dial(o);
  ASSERT_TRUE(polled.ok()) << polled.error().message;
  EXPECT_GE(proxy.refused(), 1);
  auto sub = (*polled)->subscribe("poll.>", "", [&](const Message& m) { got.push(m); }).get();
  ASSERT_TRUE(sub.ok()) << sub.error().message;
  bus::StreamConfig cfg;
  cfg.name = "POLLED";
  cfg.subjects = {"poll.s"};
  ASSERT_TRUE((*polled)->create_stream(cfg).get().ok());
  std::string binary("\x00\xff\x10 bytes", 9);
  auto ack = (*polled)->stream_publish("poll.s", binary).get();
  ASSERT_TRUE(ack.ok()) << ack.error().message;
  auto other = dial();
  ASSERT_TRUE(other);
  for (int i = 0; i < 50; ++i) ASSERT_TRUE(other->publish("poll.x", "m" + std::to_string(i)).ok());
  ASSERT_TRUE(got.wait_for(51));  // the stream publish reached the core subscriber too
  EXPECT_EQ(got.items()[0].data, binary);
  EXPECT_EQ(got.items()[50].data, "m49");
  auto stored = (*polled)->get_message("POLLED", ack->seq).get();
  ASSERT_TRUE(stored.ok());
  EXPECT_EQ(stored->data, binary);

  bus::DialOptions only = options();
  only.transport = Transport::polling;
  auto direct = Conn::dial(only);
  ASSERT_TRUE(direct.ok()) << direct.error().message;
  EXPECT_TRUE((*direct)->list_streams().get().ok());
  only.transport = Transport::websocket;
  only.urls = {proxy.url()};
  EXPECT_EQ(code_of(Conn::dial(only)), errc::unreachable);  // no fallback asked for
}

TEST_F(BusClient, DialFailsWhenNoServerAnswers) {
  bus::DialOptions o = options();
  o.urls = {"http://127.0.0.1:1", "http://127.0.0.1:2"};
  auto c = Conn::dial(o);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.error().code, errc::unreachable);
}

}  // namespace
}  // namespace siomq::test
