// HTTP publish's SSE history (surfaces/http/sse_history.h): the caps, replay after an id, the window's
// stream name, and that the windows come back from the store after a restart (file; redis when
// SIOMQ_TEST_REDIS_URL names one) with the truncation mark and the caps of the new limits; remove_realm.
#include <gtest/gtest.h>

#include <future>
#include <memory>
#include <string>
#include <vector>

#include "controlled_backend.h"
#include "store/writer.h"
#include "surfaces/http/sse_history.h"
#include "temp_store.h"

namespace siomq::surfaces::http {
namespace {

using store::SyncMode;
using store::Writer;

// A writer over `backend`, stopped before the history that uses it goes.
struct Fixture {
  explicit Fixture(store::Backend& backend, HistoryLimits limits = {})
      : writer(std::make_unique<Writer>(backend, SyncMode::always, std::chrono::microseconds(0))),
        history(*writer, limits) {}
  ~Fixture() { writer->stop(); }
  Status record(const std::string& realm, const std::string& event, const std::string& id) {
    std::promise<Status> p;
    if (!history.record(realm, event, id, "id: " + id + "\nevent: message\ndata: {}\n\n",
                        [&](const Status& s) { p.set_value(s); }))
      return make_error("refused");
    return p.get_future().get();
  }
  std::vector<std::string> ids_after(const std::string& realm, const std::string& event, const std::string& since) {
    std::vector<std::string> out;
    for (const auto& [id, frame] : history.after(realm, event, since).frames) out.push_back(id);
    return out;
  }
  std::unique_ptr<Writer> writer;
  SseHistory history;
};

using Ids = std::vector<std::string>;

TEST(SseHistory, StreamNamesSayWhichBytesAreRealmAndEvent) {
  EXPECT_EQ(history_stream("a:b", "c"), "$SSE:3:a:b:c");
  auto w = history_window_of(history_stream("a:b", "c:d"));
  ASSERT_TRUE(w);
  EXPECT_EQ(w->first, "a:b");
  EXPECT_EQ(w->second, "c:d");
  EXPECT_EQ(history_window_of(history_stream("", ""))->first, "");
  for (const char* other : {"orders", "$SSE:", "$SSE:5", "$SSE:x:a:b", "$SSE:5:ab:c", "$SSE:1:ab", "$SSE:99999999999999:a:"})
    EXPECT_FALSE(history_window_of(other)) << other;
}

TEST(SseHistory, ReplaysAfterAnIdAndDropsTheOldestPastTheCap) {
  auto backend = store::open_memory();
  Fixture f(*backend, {.max_messages = 3});
  for (const char* id : {"a", "b", "c"}) ASSERT_TRUE(f.record("r", "ev", id));
  EXPECT_EQ(f.ids_after("r", "ev", "a"), (Ids{"b", "c"}));
  EXPECT_FALSE(f.history.after("r", "ev", "zzz").truncated);
  ASSERT_TRUE(f.record("r", "ev", "d"));
  EXPECT_EQ(f.ids_after("r", "ev", "zzz"), (Ids{"b", "c", "d"}));
  EXPECT_TRUE(f.history.after("r", "ev", "zzz").truncated);
  EXPECT_TRUE(f.ids_after("r", "other", "").empty());
  EXPECT_TRUE(f.ids_after("q", "ev", "").empty());
}

TEST(SseHistory, WholeWindowsGoLeastRecentlyWrittenFirst) {
  auto backend = store::open_memory();
  Fixture f(*backend, {.max_events = 2});
  ASSERT_TRUE(f.record("r", "one", "1"));
  ASSERT_TRUE(f.record("r", "two", "2"));
  ASSERT_TRUE(f.record("r", "one", "3"));
  ASSERT_TRUE(f.record("r", "three", "4"));  // "two" is the least recently written
  EXPECT_EQ(f.history.events(), 2u);
  EXPECT_TRUE(f.ids_after("r", "two", "").empty());
  EXPECT_EQ(f.ids_after("r", "one", ""), (Ids{"1", "3"}));
}

// What a second server on the same store sees, and that the store holds exactly the windows' messages.
void round_trip(store::Backend& first, const std::function<std::unique_ptr<store::Backend>()>& reopen) {
  {
    Fixture f(first, {.max_messages = 2, .max_events = 2});
    for (const char* id : {"a", "b", "c"}) ASSERT_TRUE(f.record("shop", "ev:1", id));
    ASSERT_TRUE(f.record("other", "x", "o1"));
    ASSERT_TRUE(f.record("gone", "x", "g1"));  // "shop" goes with its records
    ASSERT_TRUE(f.record("shop", "ev:1", "d"));  // "other" goes: the last two written stay
  }
  auto second = reopen();
  auto contents = second->load();
  ASSERT_EQ(contents.stream_messages.size(), 2u);  // shop's "d" and gone's "g1"; every erase was written
  Fixture f(*second, {.max_messages = 2, .max_events = 2});
  EXPECT_TRUE(f.history.load(contents.stream_messages).empty());
  EXPECT_EQ(f.ids_after("shop", "ev:1", ""), (Ids{"d"}));
  EXPECT_EQ(f.ids_after("gone", "x", ""), (Ids{"g1"}));
  EXPECT_TRUE(f.ids_after("other", "x", "").empty());
  // The seq goes on where it was: "e" is a new record, not a replacement of "d".
  ASSERT_TRUE(f.record("shop", "ev:1", "e"));
  EXPECT_EQ(f.ids_after("shop", "ev:1", "d"), (Ids{"e"}));
  EXPECT_EQ(second->load().stream_messages.size(), 3u);
}

// The truncation comment comes back from the store with the window that was cut, and only with it.
TEST(SseHistory, TheCutMarkSurvivesARestart) {
  store::TempDir dir;
  auto path = (dir.path() / "data").string();
  {
    auto backend = store::open_file(path);
    Fixture f(*backend, {.max_messages = 2});
    for (const char* id : {"a", "b", "c"}) ASSERT_TRUE(f.record("r", "cut", id));
    for (const char* id : {"d", "e"}) ASSERT_TRUE(f.record("r", "whole", id));
  }
  auto backend = store::open_file(path);
  Fixture f(*backend, {.max_messages = 2});
  EXPECT_TRUE(f.history.load(backend->load().stream_messages).empty());
  EXPECT_TRUE(f.history.after("r", "cut", "zzz").truncated);
  EXPECT_EQ(f.ids_after("r", "cut", "zzz"), (Ids{"b", "c"}));
  EXPECT_FALSE(f.history.after("r", "whole", "zzz").truncated);
  EXPECT_EQ(f.ids_after("r", "whole", "zzz"), (Ids{"d", "e"}));
}

// remove_realm: its windows go from memory and the store; other realms' stay.
TEST(SseHistory, PurgeRealmErasesItsWindowsOnly) {
  store::TempDir dir;
  auto backend = store::open_file((dir.path() / "data").string());
  {
    Fixture f(*backend);
    ASSERT_TRUE(f.record("gone", "a", "1"));
    ASSERT_TRUE(f.record("gone", "b", "2"));
    ASSERT_TRUE(f.record("gone-not", "a", "3"));
    f.history.purge_realm("gone");
    EXPECT_TRUE(f.ids_after("gone", "a", "").empty());
    EXPECT_EQ(f.ids_after("gone-not", "a", ""), (Ids{"3"}));
    EXPECT_EQ(f.history.events(), 1u);
  }
  auto held = backend->load().stream_messages;
  ASSERT_EQ(held.size(), 1u);
  EXPECT_EQ(held[0].stream, history_stream("gone-not", "a"));
}

TEST(SseHistory, FileStoreRoundTrip) {
  store::TempDir dir;
  auto path = (dir.path() / "data").string();
  auto backend = store::open_file(path);
  round_trip(*backend, [&] {
    backend.reset();
    return store::open_file(path);
  });
}

TEST(SseHistory, RedisStoreRoundTrip) {
  if (!store::redis_url()) GTEST_SKIP() << "SIOMQ_TEST_REDIS_URL is not set";
  auto prefix = store::unique_prefix();
  auto backend = store::open_redis(store::redis_url(), prefix);
  round_trip(*backend, [&] { return store::open_redis(store::redis_url(), prefix); });
  auto cleanup = store::open_redis(store::redis_url(), prefix);
  EXPECT_TRUE(store::erase_everything(*cleanup));
}

// Restarted with smaller limits: the excess is erased, the oldest first, and the window says it was cut;
// the most recently written windows stay; other streams (the bus's) and broken records are not its.
TEST(SseHistory, LoadAppliesTheLimitsOfTheRestartedServer) {
  auto backend = store::open_memory();
  Fixture f(*backend, {.max_messages = 2, .max_events = 1});
  auto message = [](const std::string& realm, const std::string& event, uint64_t seq, int64_t ms) {
    store::StreamMessage m;
    m.stream = history_stream(realm, event);
    m.seq = seq;
    m.subject = event;
    m.payload_format = store::StreamMessage::Payload::bytes;
    m.payload = "id: x\n\n";
    m.msg_id = realm + std::to_string(seq);
    m.time_ms = ms;
    return m;
  };
  std::vector<store::StreamMessage> held{message("a", "ev", 1, 50), message("a", "ev", 2, 60),
                                         message("a", "ev", 3, 70), message("b", "ev", 4, 10)};
  store::StreamMessage bus;
  bus.stream = "orders";
  bus.seq = 1;
  held.insert(held.begin(), bus);
  store::StreamMessage wrong = message("c", "ev", 1, 80);
  wrong.subject = "not-ev";
  held.push_back(wrong);
  store::StreamMessage spelled = message("a", "ev", 9, 90);  // the same window, named another way
  spelled.stream = "$SSE:01:a:ev";
  held.push_back(spelled);
  auto ops = f.history.load(held);
  // a#1 (past two messages), c's broken record, the other spelling, b's window (written longest ago,
  // past one window).
  ASSERT_EQ(ops.size(), 4u);
  for (const auto& op : ops) EXPECT_EQ(op.kind, store::Op::Kind::erase);
  EXPECT_EQ(ops[1].key, store::stream_message_key(history_stream("c", "ev"), 1));
  EXPECT_EQ(ops[2].key, store::stream_message_key("$SSE:01:a:ev", 9));
  EXPECT_EQ(f.history.events(), 1u);
  EXPECT_EQ(f.ids_after("a", "ev", "zzz"), (Ids{"a2", "a3"}));
  EXPECT_TRUE(f.history.after("a", "ev", "zzz").truncated);
}

// A store slower than the publishers: its writes wait until the test lets them go.
using HeldBackend = test_support::ControlledBackend;

TEST(SseHistory, AStoreThatIsBehindRefusesAndNothingIsKept) {
  HeldBackend backend(HeldBackend::Mode::hold);
  Writer writer(backend, SyncMode::always, std::chrono::microseconds(0));
  SseHistory history(writer, {.max_unwritten_bytes = 100});
  std::promise<Status> first, later;
  // However the test ends: the write goes, and the writer stops before the history goes.
  struct Release {
    HeldBackend& b;
    Writer& w;
    ~Release() {
      b.release();
      w.stop();
    }
  } release{backend, writer};
  EXPECT_TRUE(history.record("r", "ev", "a", std::string(60, 'x'), [&](const Status& s) { first.set_value(s); }));
  bool ran = false;
  EXPECT_FALSE(history.record("r", "ev", "b", std::string(60, 'x'), [&](const Status&) { ran = true; }));
  EXPECT_FALSE(ran);
  std::vector<std::string> ids;
  for (const auto& [id, frame] : history.after("r", "ev", "").frames) ids.push_back(id);
  EXPECT_EQ(ids, (Ids{"a"}));
  backend.release();
  EXPECT_TRUE(first.get_future().get());
  EXPECT_TRUE(history.record("r", "ev", "c", std::string(60, 'x'), [&](const Status& s) { later.set_value(s); }));
  EXPECT_TRUE(later.get_future().get());  // written: room again
}

TEST(SseHistory, MoveAlongHandsEveryRecordOnce) {
  auto backend = store::open_memory();
  Fixture f(*backend);
  ASSERT_TRUE(f.record("r", "one", "1"));
  ASSERT_TRUE(f.record("r", "two", "2"));
  ASSERT_TRUE(f.record("r", "one", "3"));
  std::vector<store::Op> got;
  f.history.move_along({store::erase_stream_message("x", 1)}, [&](std::vector<store::Op> ops) { got = std::move(ops); });
  ASSERT_EQ(got.size(), 4u);
  EXPECT_EQ(got[1].key, store::stream_message_key(history_stream("r", "one"), 1));
  EXPECT_EQ(got[2].key, store::stream_message_key(history_stream("r", "one"), 3));  // one seq for every window
  EXPECT_EQ(got[3].key, store::stream_message_key(history_stream("r", "two"), 2));
}

}  // namespace
}  // namespace siomq::surfaces::http
