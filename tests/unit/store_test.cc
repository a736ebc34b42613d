#include "store/store.h"

#include <gtest/gtest.h>

#include <future>
#include <hiredis/hiredis.h>
#include <rocksdb/db.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <numeric>
#include <thread>

#include "store/seq_key.h"
#include "store/writer.h"
#include "record_checks.h"
#include "temp_store.h"

namespace siomq::store {
namespace {

using record_checks::all_bytes;
using record_checks::expect_refused;

namespace fs = std::filesystem;

// ---- the record codec ----

Row sample_row(uint64_t seq = 42) {
  Row r;
  r.seq = seq;
  r.id = "msg-lq2x8k0-0123456789ab";
  r.realm = "default";
  r.event = "proda-hello";
  r.consumer = "worker-1";
  r.producer = "ProdA";
  r.payload = R"({"event":"hello","message":{"n":1,"s":"x"},"from":"ProdA"})";
  r.created_ms = 1700000000123;
  return r;
}

void expect_same(const Row& a, const Row& b) {
  EXPECT_EQ(a.seq, b.seq);
  EXPECT_EQ(a.id, b.id);
  EXPECT_EQ(a.realm, b.realm);
  EXPECT_EQ(a.event, b.event);
  EXPECT_EQ(a.consumer, b.consumer);
  EXPECT_EQ(a.producer, b.producer);
  EXPECT_EQ(a.payload, b.payload);
  EXPECT_EQ(a.attachments, b.attachments);
  EXPECT_EQ(a.created_ms, b.created_ms);
  EXPECT_EQ(a.expires_ms, b.expires_ms);
}

TEST(Records, RowEncodingIsOneJsonObject) {
  Row r = sample_row(7);
  r.attachments = {"\x01\x02\x03", ""};
  r.expires_ms = 1700000060000;
  EXPECT_EQ(encode_row(r),
            R"({"seq":7,"id":"msg-lq2x8k0-0123456789ab","realm":"default","event":"proda-hello","consumer":"worker-1",)"
            R"("producer":"ProdA","payload":{"event":"hello","message":{"n":1,"s":"x"},"from":"ProdA"},)"
            R"("attachments":["AQID",""],"created_at":1700000000123,"expires_at":1700000060000})");
  r.expires_ms = 0;
  r.attachments.clear();
  EXPECT_NE(encode_row(r).find(R"("attachments":[],"created_at":1700000000123,"expires_at":null})"), std::string::npos);
}

TEST(Records, RowRoundTripKeepsEveryByte) {
  Row r = sample_row(uint64_t{1} << 53);
  r.id = std::string("nul\0inside", 10);
  r.realm = all_bytes();  // control characters, quotes, backslashes, invalid UTF-8
  r.event = "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80 \"quoted\" \\ /";
  r.consumer = "";
  r.producer = "\xed\xa0\xbd";  // a lone surrogate as WTF-8
  r.payload = R"({"a":[1,2.5e3,-0,{"b":null}],"big":123456789012345678901234567890,"s":"\u0000\ud83d\ude00"})";
  r.attachments = {all_bytes(), "", std::string(1000, '\xff')};
  r.created_ms = 0;
  r.expires_ms = int64_t{1} << 53;
  auto text = encode_row(r);
  auto back = decode_row(text);
  ASSERT_TRUE(back.ok()) << back.error().message;
  expect_same(*back, r);
  EXPECT_EQ(encode_row(*back), text);
}

TEST(Records, DecodingAcceptsWhitespaceAndAnyFieldOrder) {
  auto back = decode_row(
      " {\n \"expires_at\" : null , \"attachments\" : [ \"AQID\" ] ,\"payload\": { \"k\" : [ ] } ,\"producer\":\"p\","
      "\"consumer\":\"c\",\"event\":\"e\",\"realm\":\"r\",\"id\":\"i\\u00e9\",\"created_at\":5,\"seq\":0 } \n");
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->seq, 0u);
  EXPECT_EQ(back->id, "i\xc3\xa9");
  EXPECT_EQ(back->payload, R"({ "k" : [ ] })");
  EXPECT_EQ(back->attachments, std::vector<std::string>{"\x01\x02\x03"});
  EXPECT_EQ(back->expires_ms, 0);
}

TEST(Records, DeadRowRoundTrip) {
  DeadRow d;
  d.row = sample_row(9);
  d.row.attachments = {"bin"};
  d.row.expires_ms = 99;
  d.reason = std::string("max deliveries\0 \"5\"", 19);
  d.dead_lettered_ms = 1700000000999;
  auto text = encode_dead_row(d);
  EXPECT_TRUE(text.ends_with(R"(,"reason":"max deliveries\u0000 \"5\"","dead_lettered_at":1700000000999})")) << text;
  auto back = decode_dead_row(text);
  ASSERT_TRUE(back.ok()) << back.error().message;
  expect_same(back->row, d.row);
  EXPECT_EQ(back->reason, d.reason);
  EXPECT_EQ(back->dead_lettered_ms, d.dead_lettered_ms);
}

TEST(Records, SubscriptionRoundTrip) {
  SubscriptionRecord s{"realm\x01", "proda-TM-ALL", std::string("c\0x", 3), R"({"ack":true,"max":[1,{"x":"}"}]})"};
  auto text = encode_subscription(s);
  EXPECT_EQ(text, R"({"realm":"realm\u0001","key":"proda-TM-ALL","consumer":"c\u0000x",)"
                  R"("spec":{"ack":true,"max":[1,{"x":"}"}]}})");
  auto back = decode_subscription(text);
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->realm, s.realm);
  EXPECT_EQ(back->key, s.key);
  EXPECT_EQ(back->consumer, s.consumer);
  EXPECT_EQ(back->spec, s.spec);
}

TEST(Records, SubscriptionIdJoinsWithNul) {
  EXPECT_EQ(subscription_id("r", "k", "c"), std::string("r\0k\0c", 5));
  EXPECT_EQ(subscription_id("", "", ""), std::string("\0\0", 2));
  EXPECT_NE(subscription_id("a", "b", "c"), subscription_id("a", "bc", ""));
}

// A record object from (name, raw JSON value) members.
using Members = std::vector<std::pair<std::string, std::string>>;

Members row_members() {
  return {{"seq", "1"},         {"id", R"("i")"},      {"realm", R"("r")"},      {"event", R"("e")"},
          {"consumer", R"("c")"}, {"producer", R"("p")"}, {"payload", R"({"a":1})"}, {"attachments", R"(["AQID"])"},
          {"created_at", "5"},    {"expires_at", "null"}};
}

std::string object(const Members& members) {
  std::string out = "{";
  for (const auto& [name, value] : members) {
    if (out.size() > 1) out += ',';
    out += '"' + name + "\":" + value;
  }
  return out + "}";
}

Members with(Members m, const std::string& name, const std::string& value) {
  for (auto& [n, v] : m) {
    if (n == name) v = value;
  }
  return m;
}

Members without(Members m, const std::string& name) {
  std::erase_if(m, [&](const auto& p) { return p.first == name; });
  return m;
}

TEST(Records, RowMembersAreAValidRow) { ASSERT_TRUE(decode_row(object(row_members())).ok()); }

TEST(Records, MalformedRowsAreRefusedWithTheReason) {
  const Members good = row_members();
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"", "not a JSON object"},
      {"[1]", "not a JSON object"},
      {"\"row\"", "not a JSON object"},
      {"{", "not a JSON object"},
      {object(good) + "x", "unexpected text after the object"},
      {object(good) + "{}", "unexpected text after the object"},
      {object(with(good, "seq", "-1")), R"(field "seq" must be an integer)"},
      {object(with(good, "seq", "9007199254740993")), R"(field "seq" must be an integer)"},
      {object(with(good, "seq", "99999999999999999999")), R"(field "seq" must be an integer)"},
      {object(with(good, "seq", "1.0")), R"(field "seq" must be an integer)"},
      {object(with(good, "seq", "1e3")), R"(field "seq" must be an integer)"},
      {object(with(good, "seq", "01")), R"(field "seq" must be an integer)"},
      {object(with(good, "seq", R"("1")")), R"(field "seq" must be an integer)"},
      {object(with(good, "seq", "null")), R"(field "seq" must be an integer)"},
      {object(with(good, "id", "1")), R"(field "id" must be a string)"},
      {object(with(good, "realm", "null")), R"(field "realm" must be a string)"},
      {object(with(good, "event", R"(["e"])")), R"(field "event" must be a string)"},
      {object(with(good, "consumer", R"("bad \x escape")")), R"(field "consumer" must be a string)"},
      {object(with(good, "producer", "{}")), R"(field "producer" must be a string)"},
      {object(with(good, "payload", "[1]")), R"(field "payload" must be a JSON object)"},
      {object(with(good, "payload", R"("{}")")), R"(field "payload" must be a JSON object)"},
      {object(with(good, "payload", R"({"a":})")), R"(field "payload" must be a JSON object)"},
      {object(with(good, "payload", R"({"a":1 2})")), R"(field "payload" must be a JSON object)"},
      {object(with(good, "payload", R"({"a":tru})")), R"(field "payload" must be a JSON object)"},
      {object(with(good, "payload", R"({"a":1,})")), R"(field "payload" must be a JSON object)"},
      {object(with(good, "payload", R"({"a":[}])")), R"(field "payload" must be a JSON object)"},
      {object(with(good, "payload", "{\"a\":\"\xff\"}")), R"(field "payload" must be a JSON object)"},
      {object(with(good, "attachments", R"("AQID")")), R"(field "attachments" must be an array of base64 strings)"},
      {object(with(good, "attachments", "[1]")), R"(field "attachments" must be an array of base64 strings)"},
      {object(with(good, "attachments", R"(["AQI"])")), R"(field "attachments" must be an array of base64 strings)"},
      {object(with(good, "attachments", R"(["A=QI"])")), R"(field "attachments" must be an array of base64 strings)"},
      {object(with(good, "attachments", R"(["AQID",])")), R"(field "attachments" must be an array of base64 strings)"},
      {object(with(good, "created_at", "null")), R"(field "created_at" must be an integer)"},
      {object(with(good, "created_at", "-5")), R"(field "created_at" must be an integer)"},
      {object(with(good, "expires_at", R"("never")")), R"(field "expires_at" must be null or an integer)"},
      {object(with(good, "expires_at", "nul")), R"(field "expires_at" must be null or an integer)"},
      {object(without(good, "seq")), R"(field "seq" is missing)"},
      {object(without(good, "payload")), R"(field "payload" is missing)"},
      {object(without(good, "attachments")), R"(field "attachments" is missing)"},
      {object(without(good, "expires_at")), R"(field "expires_at" is missing)"},
      {object([&] { auto m = good; m.push_back({"seq", "2"}); return m; }()), R"(field "seq" appears twice)"},
      {object([&] { auto m = good; m.push_back({"extra", "2"}); return m; }()), R"(field "extra" is not a field)"},
      {object([&] { auto m = good; m.push_back({"reason", R"("x")"}); return m; }()),
       R"(field "reason" is not a field)"},
  };
  for (const auto& [text, why] : cases) {
    expect_refused(decode_row(text), text, why);
    EXPECT_TRUE(decode_row(text).error().message.starts_with("row: ")) << decode_row(text).error().message;
  }
  for (std::string name : {"id", "realm", "event", "consumer", "producer", "created_at"})
    expect_refused(decode_row(object(without(good, name))), name, "field \"" + name + "\" is missing");
}

TEST(Records, MalformedDeadRowsAreRefused) {
  Members good = row_members();
  good.push_back({"reason", R"("expired")"});
  good.push_back({"dead_lettered_at", "7"});
  ASSERT_TRUE(decode_dead_row(object(good)).ok());
  expect_refused(decode_dead_row(object(row_members())), "a plain row", R"(field "reason" is missing)");
  expect_refused(decode_dead_row(object(without(good, "dead_lettered_at"))), "",
                 R"(field "dead_lettered_at" is missing)");
  expect_refused(decode_dead_row(object(with(good, "reason", "5"))), "", R"(field "reason" must be a string)");
  expect_refused(decode_dead_row(object(with(good, "dead_lettered_at", "1.5"))), "",
                 R"(field "dead_lettered_at" must be an integer)");
  expect_refused(decode_dead_row(object(with(good, "seq", "x"))), "", R"(field "seq" must be an integer)");
  expect_refused(decode_dead_row("{}"), "{}", "dead row: ");
  expect_refused(decode_row(object(good)), "a dead row read as a row", R"(field "reason" is not a field)");
}

TEST(Records, MalformedSubscriptionsAreRefused) {
  const Members good = {{"realm", R"("r")"}, {"key", R"("k")"}, {"consumer", R"("c")"}, {"spec", "{}"}};
  ASSERT_TRUE(decode_subscription(object(good)).ok());
  for (std::string name : {"realm", "key", "consumer", "spec"})
    expect_refused(decode_subscription(object(without(good, name))), name, "field \"" + name + "\" is missing");
  expect_refused(decode_subscription(object(with(good, "key", "[]"))), "", R"(field "key" must be a string)");
  expect_refused(decode_subscription(object(with(good, "spec", "[]"))), "", R"(field "spec" must be a JSON object)");
  expect_refused(decode_subscription(object(with(good, "spec", R"({"a"})"))), "",
                 R"(field "spec" must be a JSON object)");
  expect_refused(decode_subscription(object(with(good, "spec", R"({"a")"))), "", "subscription: not a JSON object");
  expect_refused(decode_subscription(object(with(good, "spec", "null"))), "", R"(field "spec" must be a JSON object)");
  expect_refused(decode_subscription(object(row_members())), "a row", "subscription: field \"seq\" is not a field");
  expect_refused(decode_subscription(object(good) + ","), "", "unexpected text after the object");
}

TEST(Records, TruncatedEncodingsAreRefusedNotCrashes) {
  DeadRow d{sample_row(), "why", 5};
  d.row.attachments = {"abc"};
  for (const std::string& text : {encode_dead_row(d), encode_row(d.row),
                                  encode_subscription({"r", "k", "c", R"({"a":[1,"\"x"]})"})}) {
    for (size_t n = 0; n < text.size(); ++n) {
      std::string_view part(text.data(), n);
      EXPECT_FALSE(decode_row(part).ok() || decode_dead_row(part).ok() || decode_subscription(part).ok()) << part;
    }
  }
}

// ---- the backends ----

Op put_row(const Row& row) { return put(row); }
Op delete_row(uint64_t seq) { return erase_row(seq); }
Op put_dead(const DeadRow& d) { return put(d); }
Op delete_dead(uint64_t seq) { return erase_dead(seq); }
Op put_sub(const SubscriptionRecord& s) { return put(s); }
Op delete_sub(const SubscriptionRecord& s) { return erase_subscription(subscription_id(s.realm, s.key, s.consumer)); }
// A put of any bytes, for records no codec would write.
Op raw_put(Family family, std::string key, std::string value) {
  return Op{family, Op::Kind::put, std::move(key), std::move(value)};
}

std::vector<uint64_t> seqs(const std::vector<Row>& rows) {
  std::vector<uint64_t> out;
  for (const auto& r : rows) out.push_back(r.seq);
  return out;
}

void write_ok(Backend& b, const std::vector<Op>& ops, bool sync = true) {
  auto st = b.write(ops, sync);
  ASSERT_TRUE(st.ok()) << st.error().message;
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const StoreError& e) {
    return e.what();
  }
  return "(no StoreError)";
}

// The durable backends (memory keeps nothing, so it has its own test) through the same tests.
class DurableBackend : public testing::TestWithParam<Kind> {
 protected:
  void SetUp() override {
    if (GetParam() == Kind::redis) {
      if (!redis_url()) GTEST_SKIP() << "SIOMQ_TEST_REDIS_URL is not set (scripts/test.sh starts a redis-server)";
      prefix_ = unique_prefix();
    } else {
      dir_.emplace();
    }
    reopen();
  }

  void TearDown() override {
    if (GetParam() != Kind::redis || !backend_) return;
    EXPECT_TRUE(erase_everything(*backend_).ok());
  }

  void reopen() {
    backend_.reset();
    backend_ = GetParam() == Kind::redis ? open_redis(redis_url(), prefix_)
                                         : open_file((dir_->path() / "data").string());
  }

  std::optional<TempDir> dir_;
  std::string prefix_;
  std::unique_ptr<Backend> backend_;
};

TEST_P(DurableBackend, StartsEmpty) {
  auto c = backend_->load();
  EXPECT_TRUE(c.rows.empty());
  EXPECT_TRUE(c.dead.empty());
  EXPECT_TRUE(c.subscriptions.empty());
  EXPECT_EQ(backend_->name(), std::string(GetParam() == Kind::redis ? "redis" : "file"));
  write_ok(*backend_, {});
}

TEST_P(DurableBackend, PutsAndDeletesOfOneBatchApplyInOrder) {
  write_ok(*backend_, {put_row(sample_row(1)), put_row(sample_row(2)), put_row(sample_row(3)), delete_row(2),
                       put_row(sample_row(4)), delete_row(4), delete_row(99)});
  auto c = backend_->load();
  EXPECT_EQ(seqs(c.rows), (std::vector<uint64_t>{1, 3}));
  expect_same(c.rows[0], sample_row(1));
  // A delete then a put of the same seq leaves the put.
  write_ok(*backend_, {delete_row(3), put_row(sample_row(3))}, false);
  EXPECT_EQ(seqs(backend_->load().rows), (std::vector<uint64_t>{1, 3}));
}

TEST_P(DurableBackend, LoadReturnsRowsInSeqOrder) {
  const std::vector<uint64_t> order = {300, 5, 256, 1, uint64_t{1} << 40, 70000, 255, 2, uint64_t{1} << 53, 65536};
  for (size_t i = 0; i < order.size(); i += 3) {
    std::vector<Op> ops;
    for (size_t k = i; k < std::min(order.size(), i + 3); ++k) ops.push_back(put_row(sample_row(order[k])));
    write_ok(*backend_, ops, i % 2 == 0);
  }
  auto expected = order;
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(seqs(backend_->load().rows), expected);
}

TEST_P(DurableBackend, DeadRows) {
  Row row = sample_row(7);
  row.attachments = {std::string("\0\1\2", 3)};
  write_ok(*backend_, {put_row(row), put_row(sample_row(8)), put_row(sample_row(9))});
  DeadRow dead{row, "max deliveries", 1700000001000};
  DeadRow other{sample_row(3), "expired", 1700000002000};
  // Dead-lettering moves the row in one batch.
  write_ok(*backend_, {delete_row(7), put_dead(dead), put_dead(other), put_dead(DeadRow{sample_row(9), "x", 1}),
                       delete_dead(9)});
  auto c = backend_->load();
  EXPECT_EQ(seqs(c.rows), (std::vector<uint64_t>{8, 9}));
  ASSERT_EQ(c.dead.size(), 2u);
  EXPECT_EQ(c.dead[0].row.seq, 3u);
  EXPECT_EQ(c.dead[1].row.seq, 7u);
  expect_same(c.dead[1].row, row);
  EXPECT_EQ(c.dead[1].reason, "max deliveries");
  EXPECT_EQ(c.dead[1].dead_lettered_ms, 1700000001000);
  write_ok(*backend_, {delete_dead(3), delete_dead(7)});
  EXPECT_TRUE(backend_->load().dead.empty());
}

TEST_P(DurableBackend, SubscriptionsPutOverwriteDelete) {
  SubscriptionRecord a{"default", "proda-hello", "worker", R"({"v":1})"};
  SubscriptionRecord b{"default", "proda-hello", "other", R"({"v":2})"};
  SubscriptionRecord c{std::string("re\0alm", 6), "k\xff", "", "{}"};
  write_ok(*backend_, {put_sub(a), put_sub(b), put_sub(c)});
  a.spec = R"({"v":3,"queue":true})";
  write_ok(*backend_, {put_sub(a), delete_sub(b)});
  auto subs = backend_->load().subscriptions;
  std::sort(subs.begin(), subs.end(), [](const auto& x, const auto& y) { return x.consumer < y.consumer; });
  ASSERT_EQ(subs.size(), 2u);
  EXPECT_EQ(subs[0].realm, c.realm);
  EXPECT_EQ(subs[0].key, c.key);
  EXPECT_EQ(subs[1].consumer, "worker");
  EXPECT_EQ(subs[1].spec, a.spec);
}

TEST_P(DurableBackend, ContentsSurviveReopening) {
  DeadRow dead{sample_row(2), "expired", 5};
  SubscriptionRecord sub{"r", "k", "c", R"({"x":[]})"};
  write_ok(*backend_, {put_row(sample_row(1)), put_row(sample_row(3)), put_dead(dead), put_sub(sub)});
  write_ok(*backend_, {delete_row(3)}, false);
  reopen();
  auto c = backend_->load();
  EXPECT_EQ(seqs(c.rows), std::vector<uint64_t>{1});
  ASSERT_EQ(c.dead.size(), 1u);
  EXPECT_EQ(c.dead[0].reason, "expired");
  ASSERT_EQ(c.subscriptions.size(), 1u);
  EXPECT_EQ(c.subscriptions[0].spec, sub.spec);
}

// An unreadable record never stops the start-up: it is moved to the quarantine, counted, and the
// readable ones load as before; the next load finds it gone.
TEST_P(DurableBackend, AnUnreadableRecordIsQuarantinedAndTheRestLoads) {
  SubscriptionRecord sub{"r", "k", "c", "{}"};
  write_ok(*backend_, {put_row(sample_row(1)), raw_put(Family::row, seq_key(12345), R"({"seq":12345})"),
                       raw_put(Family::row, seq_key(77), encode_row(sample_row(78))), put_sub(sub),
                       raw_put(Family::subscription, subscription_id("r", "k2", "c"), "[]"),
                       raw_put(Family::dead_row, seq_key(9), "{]")});
  auto c = backend_->load();
  EXPECT_EQ(c.quarantined, 4u);
  EXPECT_EQ(seqs(c.rows), (std::vector<uint64_t>{1}));
  ASSERT_EQ(c.subscriptions.size(), 1u);
  EXPECT_EQ(c.subscriptions[0].key, "k");
  EXPECT_TRUE(c.dead.empty());
  reopen();
  auto again = backend_->load();
  EXPECT_EQ(again.quarantined, 0u) << "moved once, not found again";
  EXPECT_EQ(seqs(again.rows), (std::vector<uint64_t>{1}));
  EXPECT_EQ(again.subscriptions.size(), 1u);
  write_ok(*backend_, {delete_row(1), delete_sub(sub)});
}

// The engine moves a subscription it cannot use aside through the same quarantine.
TEST_P(DurableBackend, QuarantiningASubscriptionDeletesIt) {
  SubscriptionRecord sub{"r", "k", "c", R"({"not":"a spec"})"};
  write_ok(*backend_, {put_sub(sub)});
  const std::string id = subscription_id(sub.realm, sub.key, sub.consumer);
  EXPECT_EQ(quarantine(sub).key, id);
  write_ok(*backend_, {quarantine(sub)});
  auto c = backend_->load();
  EXPECT_TRUE(c.subscriptions.empty());
  EXPECT_EQ(c.quarantined, 0u);
}

TEST_P(DurableBackend, ReportsItsSize) {
  write_ok(*backend_, {put_row(sample_row(1))});
  EXPECT_GT(backend_->stats().disk_bytes, 0u);
}

INSTANTIATE_TEST_SUITE_P(Store, DurableBackend, testing::Values(Kind::file, Kind::redis),
                         [](const auto& info) { return info.param == Kind::file ? "File" : "Redis"; });

TEST(MemoryBackend, KeepsNothing) {
  auto b = open_memory();
  EXPECT_EQ(b->name(), std::string("memory"));
  write_ok(*b, {put_row(sample_row(1)), put_sub({"r", "k", "c", "{}"})});
  auto c = b->load();
  EXPECT_TRUE(c.rows.empty() && c.dead.empty() && c.subscriptions.empty());
  EXPECT_EQ(b->stats().disk_bytes, 0u);
}

// ---- the file backend's data directory ----

TEST(FileBackend, CreatesAMissingDirectory) {
  TempDir tmp;
  auto dir = tmp.path() / "a" / "b" / "data";
  write_ok(*open_file(dir.string()), {put_row(sample_row(1))});
  EXPECT_TRUE(fs::is_regular_file(dir / "SIOMQ_STORE"));
  std::ifstream marker(dir / "SIOMQ_STORE");
  std::string line;
  std::getline(marker, line);
  EXPECT_EQ(line, "siomq store format 1");
  EXPECT_EQ(open_file(dir.string())->load().rows.size(), 1u);
}

TEST(FileBackend, InitialisesAnEmptyDirectory) {
  TempDir tmp;
  write_ok(*open_file(tmp.path().string()), {put_row(sample_row(1))});
  EXPECT_TRUE(fs::exists(tmp.path() / "SIOMQ_STORE"));
  EXPECT_TRUE(fs::exists(tmp.path() / "CURRENT"));
}

TEST(FileBackend, RefusesADirectoryOfOtherFiles) {
  TempDir tmp;
  std::ofstream(tmp.path() / "notes.txt") << "mine";
  auto why = error_of([&] { open_file(tmp.path().string()); });
  EXPECT_NE(why.find("is not a siomq data directory"), std::string::npos) << why;
  EXPECT_EQ(std::distance(fs::directory_iterator(tmp.path()), fs::directory_iterator()), 1);  // nothing written
}

TEST(FileBackend, RefusesAFileAsTheDirectory) {
  TempDir tmp;
  std::ofstream(tmp.path() / "file") << "x";
  EXPECT_NE(error_of([&] { open_file((tmp.path() / "file").string()); }).find("not a directory"), std::string::npos);
}

TEST(FileBackend, InitialisesADirectoryHoldingOnlyTheMarker) {
  TempDir tmp;
  std::ofstream(tmp.path() / "SIOMQ_STORE") << "siomq st";  // a creation cut short
  write_ok(*open_file(tmp.path().string()), {put_row(sample_row(1))});
  EXPECT_EQ(open_file(tmp.path().string())->load().rows.size(), 1u);
}

TEST(FileBackend, RefusesAStoreWithoutCurrent) {
  TempDir tmp;
  write_ok(*open_file(tmp.path().string()), {put_row(sample_row(1))});
  fs::remove(tmp.path() / "CURRENT");
  auto why = error_of([&] { open_file(tmp.path().string()); });
  EXPECT_NE(why.find("cannot open the store"), std::string::npos) << why;
  EXPECT_NE(why.find("CURRENT"), std::string::npos) << why;
  EXPECT_FALSE(fs::exists(tmp.path() / "CURRENT"));  // not recreated empty
}

TEST(FileBackend, RefusesAnotherFormatVersion) {
  TempDir tmp;
  write_ok(*open_file(tmp.path().string()), {put_row(sample_row(1))});
  std::ofstream(tmp.path() / "SIOMQ_STORE") << "siomq store format 2\n";
  auto why = error_of([&] { open_file(tmp.path().string()); });
  EXPECT_NE(why.find("format 1"), std::string::npos) << why;
}

TEST(FileBackend, RefusesAStoreOpenElsewhere) {
  TempDir tmp;
  auto first = open_file(tmp.path().string());
  auto why = error_of([&] { open_file(tmp.path().string()); });
  EXPECT_NE(why.find("LOCK"), std::string::npos) << why;
}

// A damaged row and a key no siomq version writes are kept byte for byte under 'q' + their key.
TEST(FileBackend, ACorruptedRecordOrForeignKeyIsKeptInTheQuarantine) {
  TempDir tmp;
  write_ok(*open_file(tmp.path().string()), {put_row(sample_row(1)), put_row(sample_row(5))});
  const std::string row5("r\0\0\0\0\0\0\0\5", 9);
  {
    rocksdb::DB* raw = nullptr;
    ASSERT_TRUE(rocksdb::DB::Open(rocksdb::Options(), tmp.path().string(), &raw).ok());
    std::unique_ptr<rocksdb::DB> db(raw);
    ASSERT_TRUE(db->Put(rocksdb::WriteOptions(), row5, "{\"seq\":5,garbage").ok());
    ASSERT_TRUE(db->Put(rocksdb::WriteOptions(), "x-foreign", "{}").ok());
  }
  auto c = open_file(tmp.path().string())->load();
  EXPECT_EQ(c.quarantined, 2u);
  EXPECT_EQ(seqs(c.rows), (std::vector<uint64_t>{1}));
  rocksdb::DB* raw = nullptr;
  ASSERT_TRUE(rocksdb::DB::OpenForReadOnly(rocksdb::Options(), tmp.path().string(), &raw).ok());
  std::unique_ptr<rocksdb::DB> db(raw);
  std::string value;
  EXPECT_TRUE(db->Get(rocksdb::ReadOptions(), "q" + row5, &value).ok());
  EXPECT_EQ(value, "{\"seq\":5,garbage");
  EXPECT_TRUE(db->Get(rocksdb::ReadOptions(), "qx-foreign", &value).ok());
  EXPECT_EQ(value, "{}");
  EXPECT_TRUE(db->Get(rocksdb::ReadOptions(), row5, &value).IsNotFound());
  EXPECT_TRUE(db->Get(rocksdb::ReadOptions(), "x-foreign", &value).IsNotFound());
}

TEST(FileBackend, SpaceOfDeletedRowsIsReclaimed) {
  TempDir tmp;
  auto store = open_file(tmp.path().string());
  constexpr uint64_t kRows = 100000;
  Row row = sample_row();
  row.payload = R"({"event":"hello","message":")" + std::string(30, 'x') + R"(","from":"ProdA"})";
  for (uint64_t seq = 1; seq <= kRows; seq += 1000) {
    std::vector<Op> ops;
    for (uint64_t s = seq; s < seq + 1000; ++s) {
      row.seq = s;
      ops.push_back(put_row(row));
    }
    write_ok(*store, ops, false);
  }
  const uint64_t full = store->stats().disk_bytes;
  // What is left when nothing is stored: the marker, OPTIONS, MANIFEST, RocksDB's LOG (~50 KiB). Without
  // maintain() the tombstones and the rows they hide keep over 1 MiB of files for as long as no more
  // writes come.
  const uint64_t kReclaimed = 512 * 1024;
  for (uint64_t seq = 1; seq <= kRows; seq += 1000) {
    std::vector<Op> ops;
    for (uint64_t s = seq; s < seq + 1000; ++s) ops.push_back(delete_row(s));
    write_ok(*store, ops, seq + 1000 > kRows);
  }
  EXPECT_TRUE(store->load().rows.empty());
  store->maintain();
  // The compaction runs in the background; writes go on meanwhile.
  write_ok(*store, {put_row(sample_row(kRows + 1))});
  uint64_t after = store->stats().disk_bytes;
  for (int i = 0; i < 100 && after > kReclaimed; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    after = store->stats().disk_bytes;
  }
  EXPECT_GT(full, 10 * kReclaimed);
  EXPECT_LT(after, kReclaimed) << "full " << full << " bytes, after deleting and maintain() " << after;
  store->maintain();
  EXPECT_EQ(seqs(store->load().rows), std::vector<uint64_t>{kRows + 1});
}

TEST(FileBackend, ClosingDuringACompactionIsSafe) {
  TempDir tmp;
  {
    auto store = open_file(tmp.path().string());
    std::vector<Op> ops;
    for (uint64_t seq = 1; seq <= 20000; ++seq) ops.push_back(put_row(sample_row(seq)));
    write_ok(*store, ops, false);
    ops.clear();
    for (uint64_t seq = 1; seq <= 19999; ++seq) ops.push_back(delete_row(seq));
    write_ok(*store, ops, false);
    store->maintain();
  }
  EXPECT_EQ(seqs(open_file(tmp.path().string())->load().rows), std::vector<uint64_t>{20000});
}

// ---- the writer on the file backend ----

TEST(Writer, GroupCommitsConcurrentSubmissionsInOrder) {
  TempDir tmp;
  auto store = open_file(tmp.path().string());
  Writer writer(*store, SyncMode::batch, std::chrono::microseconds(500));
  constexpr int kThreads = 4, kEach = 250;
  std::vector<std::vector<int>> done(kThreads);  // appended to on the writer thread only
  std::atomic<int> ok{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kEach; ++i) {
        writer.submit({put_row(sample_row(static_cast<uint64_t>(t * kEach + i + 1)))}, [&, t, i](const Status& st) {
          if (st.ok()) ++ok;
          done[static_cast<size_t>(t)].push_back(i);
        });
      }
    });
  }
  for (auto& th : threads) th.join();
  writer.stop();
  EXPECT_EQ(ok.load(), kThreads * kEach);
  for (int t = 0; t < kThreads; ++t) {
    std::vector<int> expected(kEach);
    std::iota(expected.begin(), expected.end(), 0);
    EXPECT_EQ(done[static_cast<size_t>(t)], expected) << "thread " << t;
  }
  auto stats = writer.stats();
  EXPECT_EQ(stats.ops, static_cast<uint64_t>(kThreads * kEach));
  EXPECT_LT(stats.writes, static_cast<uint64_t>(kThreads * kEach));
  EXPECT_EQ(stats.failures, 0u);
  EXPECT_EQ(store->load().rows.size(), static_cast<size_t>(kThreads * kEach));
}

TEST(Writer, SwitchWritesTheContentsThenEverythingLaterToTheNewBackend) {
  TempDir da, db;
  auto a = open_file(da.path().string());
  auto b = open_file(db.path().string());
  Writer writer(*a, SyncMode::batch, std::chrono::microseconds(200));
  writer.submit({put_row(sample_row(1))}, {});
  std::promise<Status> switched;
  writer.switch_to(*b, {put_row(sample_row(1)), put_row(sample_row(2))}, [&](const Status& st) { switched.set_value(st); });
  writer.submit({put_row(sample_row(3))}, {});
  ASSERT_TRUE(switched.get_future().get().ok());
  writer.stop();
  EXPECT_EQ(&writer.backend(), b.get());
  EXPECT_EQ(a->load().rows.size(), 1u);  // only what came before the switch
  auto rows = b->load().rows;
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[2].seq, 3u);
}

TEST(Writer, StopDrainsWhatWasSubmitted) {
  TempDir tmp;
  auto store = open_file(tmp.path().string());
  int completed = 0;
  {
    Writer writer(*store, SyncMode::batch, std::chrono::milliseconds(20));
    for (uint64_t seq = 1; seq <= 200; ++seq)
      writer.submit({put_row(sample_row(seq))}, [&](const Status& st) { completed += st.ok(); });
    writer.stop();
    EXPECT_EQ(completed, 200);
    std::optional<Status> late;
    writer.submit({put_row(sample_row(999))}, [&](const Status& st) { late = st; });
    ASSERT_TRUE(late.has_value());
    EXPECT_FALSE(late->ok());
  }
  EXPECT_EQ(store->load().rows.size(), 200u);
}

// ---- redis only ----

TEST(RedisBackend, UnreachableServerIsAStoreError) {
  EXPECT_NE(error_of([] { open_redis("redis://127.0.0.1:1", "p"); }).find("cannot connect"), std::string::npos);
}

TEST(RedisBackend, BadUrlsAreStoreErrors) {
  for (const char* url : {"http://localhost", "redis://host:0", "redis://host:99999", "redis://host:x",
                          "redis://host/db", "redis://[::1"}) {
    EXPECT_NE(error_of([&] { open_redis(url, "p"); }).find("bad redis URL"), std::string::npos) << url;
  }
}

TEST(RedisBackend, UsesTheDatabaseOfTheUrl) {
  if (!redis_url()) GTEST_SKIP() << "SIOMQ_TEST_REDIS_URL is not set";
  const std::string base = redis_url(), prefix = unique_prefix();
  ASSERT_EQ(base.find('/', 8), std::string::npos) << "expects a URL without a database";
  auto db3 = open_redis(base + "/3", prefix);
  write_ok(*db3, {put_row(sample_row(1))});
  EXPECT_TRUE(open_redis(base, prefix)->load().rows.empty());
  EXPECT_EQ(open_redis(base + "/3", prefix)->load().rows.size(), 1u);
  write_ok(*db3, {delete_row(1)});
}

TEST(RedisBackend, ARefusedPasswordIsAStoreError) {
  if (!redis_url()) GTEST_SKIP() << "SIOMQ_TEST_REDIS_URL is not set";
  std::string url = redis_url();
  url.insert(8, ":not-the-password@");
  auto why = error_of([&] { open_redis(url, "p"); });
  EXPECT_NE(why.find("AUTH"), std::string::npos) << why;
}

// The connections of this process's backends, by their client name.
std::vector<std::string> own_client_ids(redisContext* c) {
  std::vector<std::string> ids;
  auto* reply = static_cast<redisReply*>(redisCommand(c, "CLIENT LIST"));
  if (!reply) return ids;
  std::string list(reply->str ? reply->str : "", reply->str ? reply->len : 0);
  freeReplyObject(reply);
  const std::string name = "name=siomq-store-" + std::to_string(::getpid()) + " ";
  for (size_t at = 0; at < list.size();) {
    size_t end = list.find('\n', at);
    std::string line = list.substr(at, end - at) + " ";
    if (line.find(name) != std::string::npos && line.starts_with("id="))
      ids.push_back(line.substr(3, line.find(' ') - 3));
    at = end == std::string::npos ? list.size() : end + 1;
  }
  return ids;
}

using AdminConnection = std::unique_ptr<redisContext, void (*)(redisContext*)>;

// A plain connection to the tests' server (redis://host:port, no credentials) for what the backend
// never does.
AdminConnection admin_connection() {
  std::string hostport = std::string(redis_url()).substr(8);
  hostport = hostport.substr(0, hostport.find('/'));
  std::string host = hostport.substr(0, hostport.rfind(':'));
  int port = std::stoi(hostport.substr(hostport.rfind(':') + 1));
  return AdminConnection(redisConnect(host.c_str(), port), redisFree);
}

// A damaged row is kept byte for byte in <prefix>:quarantine under "rows:<seq>".
TEST(RedisBackend, ACorruptedRowIsKeptInTheQuarantineHash) {
  if (!redis_url()) GTEST_SKIP() << "SIOMQ_TEST_REDIS_URL is not set";
  auto admin = admin_connection();
  ASSERT_TRUE(admin && !admin->err);
  const std::string prefix = unique_prefix();
  auto store = open_redis(redis_url(), prefix);
  write_ok(*store, {put_row(sample_row(1)), raw_put(Family::row, seq_key(7), "{]")});
  auto c = store->load();
  EXPECT_EQ(c.quarantined, 1u);
  EXPECT_EQ(seqs(c.rows), (std::vector<uint64_t>{1}));
  auto* reply = static_cast<redisReply*>(redisCommand(admin.get(), "HGET %s:quarantine rows:7", prefix.c_str()));
  ASSERT_TRUE(reply);
  EXPECT_EQ(std::string(reply->str ? reply->str : "", reply->str ? reply->len : 0), "{]");
  freeReplyObject(reply);
  reply = static_cast<redisReply*>(redisCommand(admin.get(), "DEL %s:quarantine %s:rows", prefix.c_str(), prefix.c_str()));
  freeReplyObject(reply);
}

TEST(RedisBackend, ReconnectsOnceWhenTheConnectionIsLost) {
  if (!redis_url()) GTEST_SKIP() << "SIOMQ_TEST_REDIS_URL is not set";
  auto admin = admin_connection();
  ASSERT_TRUE(admin && !admin->err);

  const std::string prefix = unique_prefix();
  auto store = open_redis(redis_url(), prefix);
  write_ok(*store, {put_row(sample_row(1))});
  auto ids = own_client_ids(admin.get());
  ASSERT_EQ(ids.size(), 1u);
  freeReplyObject(redisCommand(admin.get(), "CLIENT KILL ID %s", ids[0].c_str()));

  write_ok(*store, {put_row(sample_row(2))});  // on a new connection
  EXPECT_EQ(seqs(store->load().rows), (std::vector<uint64_t>{1, 2}));
  write_ok(*store, {delete_row(1), delete_row(2)});
}

TEST(RedisBackend, ARefusedChangeIsAnErrorAndTheConnectionStaysUsable) {
  if (!redis_url()) GTEST_SKIP() << "SIOMQ_TEST_REDIS_URL is not set";
  auto admin = admin_connection();
  ASSERT_TRUE(admin && !admin->err);
  const std::string prefix = unique_prefix();
  freeReplyObject(redisCommand(admin.get(), "SET %s:dead x", prefix.c_str()));

  auto store = open_redis(redis_url(), prefix);
  auto st = store->write({put_row(sample_row(1)), put_dead(DeadRow{sample_row(2), "x", 1})}, true);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.error().message.find("WRONGTYPE"), std::string::npos) << st.error().message;
  EXPECT_NE(error_of([&] { store->load(); }).find("WRONGTYPE"), std::string::npos);
  // Every reply of the failed transaction was read: the next one is answered in step.
  freeReplyObject(redisCommand(admin.get(), "DEL %s:dead", prefix.c_str()));
  write_ok(*store, {delete_row(1), put_row(sample_row(3))});
  EXPECT_EQ(seqs(store->load().rows), std::vector<uint64_t>{3});
  write_ok(*store, {delete_row(3)});
}

}  // namespace
}  // namespace siomq::store
