// The record families added to the store for the bus and the directories (stream log, consumer state,
// directory entries): their codecs, their keys, and their way through the writer into each backend and
// back. Also pins the on-disk layout of the tyo-mq families written before families existed.
#include <gtest/gtest.h>
#include <hiredis/hiredis.h>
#include <rocksdb/db.h>

#include <memory>
#include <string>
#include <vector>

#include "store/backend.h"
#include "store/seq_key.h"
#include "store/writer.h"
#include "record_checks.h"
#include "temp_store.h"

namespace siomq::store {
namespace {

using record_checks::all_bytes;
using record_checks::expect_refused;

using namespace std::string_literals;

StreamMessage sample_message(std::string stream = "orders", uint64_t seq = 1) {
  StreamMessage m;
  m.stream = std::move(stream);
  m.seq = seq;
  m.subject = "orders.eu.created";
  m.headers = R"({"trace":"t-1"})";
  m.payload = R"({"id":7,"items":[1,2]})";
  m.time_ms = 1700000000123;
  m.msg_id = "pub-1";
  return m;
}

void expect_same(const StreamMessage& a, const StreamMessage& b) {
  EXPECT_EQ(a.stream, b.stream);
  EXPECT_EQ(a.seq, b.seq);
  EXPECT_EQ(a.subject, b.subject);
  EXPECT_EQ(a.headers, b.headers);
  EXPECT_EQ(a.payload_format, b.payload_format);
  EXPECT_EQ(a.payload, b.payload);
  EXPECT_EQ(a.attachments, b.attachments);
  EXPECT_EQ(a.time_ms, b.time_ms);
  EXPECT_EQ(a.msg_id, b.msg_id);
}

ConsumerState sample_consumer(std::string stream = "orders", std::string consumer = "billing") {
  return ConsumerState{std::move(stream), std::move(consumer), 10, 4, {{5, 1, 1700000000000}, {9, 3, 1700000000500}},
                       R"({"ack_wait_ms":30000,"filter":"orders.>"})"};
}

void expect_same(const ConsumerState& a, const ConsumerState& b) {
  EXPECT_EQ(a.stream, b.stream);
  EXPECT_EQ(a.consumer, b.consumer);
  EXPECT_EQ(a.delivered, b.delivered);
  EXPECT_EQ(a.ack_floor, b.ack_floor);
  EXPECT_EQ(a.pending, b.pending);
  EXPECT_EQ(a.config, b.config);
}

DirectoryEntry sample_entry(std::string key = "alice") {
  return DirectoryEntry{"e2ee", "default", std::move(key), R"({"kty":"OKP","x":"11qYAYKxCrfVS_7TyWQHOg"})",
                        1700000000777};
}

void expect_same(const DirectoryEntry& a, const DirectoryEntry& b) {
  EXPECT_EQ(a.directory, b.directory);
  EXPECT_EQ(a.realm, b.realm);
  EXPECT_EQ(a.key, b.key);
  EXPECT_EQ(a.value, b.value);
  EXPECT_EQ(a.updated_ms, b.updated_ms);
}

// Replaces the first occurrence of `from` in `text` (which must hold it).
std::string replaced(std::string text, const std::string& from, const std::string& to) {
  auto at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from << " in " << text;
  return at == std::string::npos ? text : text.replace(at, from.size(), to);
}

// ---- the stream log ----

TEST(StreamLog, EncodingIsOneJsonObject) {
  StreamMessage m = sample_message("orders", 3);
  m.attachments = {"\x01\x02\x03"};
  EXPECT_EQ(encode_stream_message(m),
            R"({"stream":"orders","seq":3,"subject":"orders.eu.created","headers":{"trace":"t-1"},)"
            R"("payload_format":"json","payload":{"id":7,"items":[1,2]},"attachments":["AQID"],)"
            R"("time":1700000000123,"msg_id":"pub-1"})");
  m.headers.reset();
  m.msg_id.reset();
  m.payload_format = StreamMessage::Payload::bytes;
  m.payload = std::string("\xff\0", 2);
  m.attachments.clear();
  EXPECT_EQ(encode_stream_message(m),
            R"({"stream":"orders","seq":3,"subject":"orders.eu.created","headers":null,)"
            R"("payload_format":"bytes","payload":"/wA=","attachments":[],"time":1700000000123,"msg_id":null})");
}

TEST(StreamLog, RoundTripKeepsEveryByte) {
  StreamMessage m = sample_message(all_bytes(), uint64_t{1} << 53);
  m.subject = std::string("a\0b", 3);
  m.msg_id = all_bytes();
  m.attachments = {all_bytes(), ""};
  for (const std::string payload : {"null", "\"text\"", "[1,{\"a\":\"\\u0000\"}]", "12.5e3"}) {
    m.payload = payload;
    auto back = decode_stream_message(encode_stream_message(m));
    ASSERT_TRUE(back.ok()) << back.error().message;
    expect_same(*back, m);
  }
  m.payload_format = StreamMessage::Payload::bytes;
  m.payload = all_bytes();
  m.headers.reset();
  m.msg_id.reset();
  auto text = encode_stream_message(m);
  auto back = decode_stream_message(text);
  ASSERT_TRUE(back.ok()) << back.error().message;
  expect_same(*back, m);
  EXPECT_EQ(encode_stream_message(*back), text);
}

TEST(StreamLog, MalformedMessagesAreRefusedWithTheReason) {
  const std::string good = encode_stream_message(sample_message());
  ASSERT_TRUE(decode_stream_message(good).ok());
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"", "stream message: not a JSON object"},
      {good + "x", "unexpected text after the object"},
      {replaced(good, R"("seq":1)", R"("seq":-1)"), R"(field "seq" must be an integer)"},
      {replaced(good, R"("seq":1)", R"("seq":9007199254740993)"), R"(field "seq" must be an integer)"},
      {replaced(good, R"("stream":"orders")", R"("stream":7)"), R"(field "stream" must be a string)"},
      {replaced(good, R"({"trace":"t-1"})", R"(["t-1"])"), R"(field "headers" must be null or a JSON object)"},
      {replaced(good, R"({"trace":"t-1"})", R"({"trace":})"), R"(field "headers" must be null or a JSON object)"},
      {replaced(good, R"("json")", R"("xml")"), R"(field "payload_format" must be "json" or "bytes")"},
      {replaced(good, R"({"id":7,"items":[1,2]})", R"({"id":7,"items":[1,2})"), "stream message: "},
      {replaced(good, R"({"id":7,"items":[1,2]})", R"(tru)"), R"(field "payload" must be a JSON value)"},
      {replaced(good, R"({"id":7,"items":[1,2]})", "\"\xff\""), R"(field "payload" must be a JSON value)"},
      {replaced(replaced(good, R"("json")", R"("bytes")"), R"({"id":7,"items":[1,2]})", R"("A=QI")"),
       R"(field "payload" must be a base64 string)"},
      {replaced(replaced(good, R"("json")", R"("bytes")"), R"({"id":7,"items":[1,2]})", R"({})"),
       R"(field "payload" must be a base64 string)"},
      {replaced(good, R"("attachments":[])", R"("attachments":[1])"),
       R"(field "attachments" must be an array of base64 strings)"},
      {replaced(good, R"("time":1700000000123)", R"("time":null)"), R"(field "time" must be an integer)"},
      {replaced(good, R"("msg_id":"pub-1")", R"("msg_id":1)"), R"(field "msg_id" must be null or a string)"},
      {replaced(good, R"(,"msg_id":"pub-1")", ""), R"(field "msg_id" is missing)"},
      {replaced(good, R"("msg_id")", R"("extra")"), R"(field "extra" is not a field)"},
      {replaced(good, R"("subject")", R"("stream")"), R"(field "stream" appears twice)"},
  };
  for (const auto& [text, why] : cases) expect_refused(decode_stream_message(text), text, why);
}

TEST(StreamLog, KeyIsTheStreamANulAndTheSeqBigEndian) {
  EXPECT_EQ(stream_message_key("orders", 258), std::string("orders\0\0\0\0\0\0\0\1\2", 15));
  Op op = put(sample_message("s", 1));
  EXPECT_EQ(op.family, Family::stream_message);
  EXPECT_EQ(op.kind, Op::Kind::put);
  EXPECT_EQ(op.key, stream_message_key("s", 1));
  EXPECT_EQ(op.value, encode_stream_message(sample_message("s", 1)));
  Op erase = erase_stream_message("s", 1);
  EXPECT_EQ(erase.kind, Op::Kind::erase);
  EXPECT_EQ(erase.key, op.key);
  EXPECT_TRUE(erase.value.empty());
}

// ---- consumer state ----

TEST(ConsumerStates, EncodingAndRoundTrip) {
  ConsumerState s = sample_consumer();
  EXPECT_EQ(encode_consumer_state(s),
            R"({"stream":"orders","consumer":"billing","delivered":10,"ack_floor":4,)"
            R"("pending":[[5,1,1700000000000],[9,3,1700000000500]],"config":{"ack_wait_ms":30000,"filter":"orders.>"}})");
  s.stream = all_bytes();
  s.consumer = std::string("c\0\xff", 3);
  for (const ConsumerState& state : {s, ConsumerState{"a", "b", 0, 0, {}, "{}"}}) {
    auto back = decode_consumer_state(encode_consumer_state(state));
    ASSERT_TRUE(back.ok()) << back.error().message;
    expect_same(*back, state);
  }
  auto spaced = decode_consumer_state(
      R"( { "config" : { } , "pending" : [ [ 2 , 1 , 0 ] ] , "ack_floor":1,"delivered":2,"consumer":"c","stream":"s"} )");
  ASSERT_TRUE(spaced.ok()) << spaced.error().message;
  EXPECT_EQ(spaced->pending, (std::vector<PendingDelivery>{{2, 1, 0}}));
}

TEST(ConsumerStates, MalformedOrOutOfOrderStatesAreRefused) {
  const std::string good = encode_consumer_state(sample_consumer());
  const std::string kPending = R"([[5,1,1700000000000],[9,3,1700000000500]])";
  const std::string kBadPending = R"(field "pending" must be an array of [stream_seq, deliveries, last_delivered_ms])";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {replaced(good, kPending, "{}"), kBadPending},
      {replaced(good, kPending, "[5]"), kBadPending},
      {replaced(good, kPending, "[[5,1]]"), kBadPending},
      {replaced(good, kPending, "[[5,1,2,3]]"), kBadPending},
      {replaced(good, kPending, R"([[5,"1",2]])"), kBadPending},
      {replaced(good, kPending, "[[5,1,-2]]"), kBadPending},
      {replaced(good, kPending, "[[5,1,2],]"), kBadPending},
      {replaced(good, kPending, "[[5,1,2]"), "consumer state: not a JSON object"},
      {replaced(good, kPending, "[[9,1,2],[5,1,2]]"), R"(field "pending" must be in stream seq order)"},
      {replaced(good, kPending, "[[5,1,2],[5,1,2]]"), R"(field "pending" must be in stream seq order)"},
      {replaced(good, kPending, "[[4,1,2]]"), R"(field "pending" must be in stream seq order)"},
      {replaced(good, kPending, "[[11,1,2]]"), R"(field "pending" must be in stream seq order)"},
      {replaced(good, kPending, "[[5,0,2]]"), R"(field "pending" holds a message delivered 0 times)"},
      {replaced(good, R"("ack_floor":4)", R"("ack_floor":11)"), R"(field "ack_floor" is above "delivered")"},
      {replaced(good, R"("delivered":10)", R"("delivered":"10")"), R"(field "delivered" must be an integer)"},
      {replaced(good, R"({"ack_wait_ms":30000,"filter":"orders.>"})", "null"), R"(field "config" must be a JSON object)"},
      {replaced(good, R"("consumer":"billing",)", ""), R"(field "consumer" is missing)"},
  };
  for (const auto& [text, why] : cases) expect_refused(decode_consumer_state(text), text, why);
}

TEST(ConsumerStates, KeyIsTheStreamANulAndTheConsumer) {
  EXPECT_EQ(consumer_state_key("orders", "billing"), std::string("orders\0billing", 14));
  EXPECT_EQ(put(sample_consumer()).key, consumer_state_key("orders", "billing"));
  EXPECT_EQ(put(sample_consumer()).family, Family::consumer_state);
  EXPECT_EQ(erase_consumer_state("orders", "billing").key, consumer_state_key("orders", "billing"));
}

// ---- directory entries ----

TEST(Directory, EncodingAndRoundTrip) {
  EXPECT_EQ(encode_directory_entry(sample_entry()),
            R"({"directory":"e2ee","realm":"default","key":"alice",)"
            R"("value":{"kty":"OKP","x":"11qYAYKxCrfVS_7TyWQHOg"},"updated_at":1700000000777})");
  DirectoryEntry e{"auth", std::string("re\0alm", 6), all_bytes(), "", 0};
  for (const std::string value : {"null", "\"s\"", "[1,2]", "-0.5", R"({"a":{"b":[{}]}})"}) {
    e.value = value;
    auto back = decode_directory_entry(encode_directory_entry(e));
    ASSERT_TRUE(back.ok()) << back.error().message;
    expect_same(*back, e);
  }
}

TEST(Directory, MalformedEntriesAreRefused) {
  const std::string good = encode_directory_entry(sample_entry());
  const std::string kValue = R"({"kty":"OKP","x":"11qYAYKxCrfVS_7TyWQHOg"})";
  expect_refused(decode_directory_entry(replaced(good, kValue, "nul")), "", R"(field "value" must be a JSON value)");
  expect_refused(decode_directory_entry(replaced(good, kValue, R"({"a":1,})")), "", "directory entry: ");
  expect_refused(decode_directory_entry(replaced(good, R"("key":"alice")", R"("key":null)")), "",
                 R"(field "key" must be a string)");
  expect_refused(decode_directory_entry(replaced(good, R"("updated_at":1700000000777)", R"("updated_at":1.5)")), "",
                 R"(field "updated_at" must be an integer)");
  expect_refused(decode_directory_entry(replaced(good, R"("directory":"e2ee",)", "")), "",
                 R"(field "directory" is missing)");
  EXPECT_EQ(directory_key("e2ee", "default", "alice"), std::string("e2ee\0default\0alice", 18));
  EXPECT_EQ(put(sample_entry()).family, Family::directory_entry);
  EXPECT_EQ(erase_directory_entry("e2ee", "default", "alice").key, directory_key("e2ee", "default", "alice"));
}

TEST(RecordFamilies, TruncatedEncodingsAreRefusedNotCrashes) {
  StreamMessage bytes = sample_message();
  bytes.payload_format = StreamMessage::Payload::bytes;
  bytes.attachments = {"abc"};
  for (const std::string& text : {encode_stream_message(sample_message()), encode_stream_message(bytes),
                                  encode_consumer_state(sample_consumer()), encode_directory_entry(sample_entry())}) {
    for (size_t n = 0; n < text.size(); ++n) {
      std::string_view part(text.data(), n);
      EXPECT_FALSE(decode_stream_message(part).ok() || decode_consumer_state(part).ok() ||
                   decode_directory_entry(part).ok())
          << part;
    }
  }
}

TEST(RecordFamilies, EachFamilyHasItsOwnPrefixAndHash) {
  for (size_t i = 0; i < kFamilies.size(); ++i) {
    EXPECT_EQ(static_cast<size_t>(kFamilies[i].family), i);
    EXPECT_EQ(family_of_file_prefix(kFamilies[i].file_prefix), kFamilies[i].family);
    EXPECT_NE(kFamilies[i].file_prefix, kQuarantineFilePrefix);
    EXPECT_NE(kFamilies[i].redis_hash, kQuarantineRedisHash);
    for (size_t k = 0; k < i; ++k) EXPECT_NE(kFamilies[i].redis_hash, kFamilies[k].redis_hash);
  }
  EXPECT_FALSE(family_of_file_prefix(kQuarantineFilePrefix).has_value());
  // On disk and in redis since before families: never to change.
  EXPECT_EQ(info(Family::row).file_prefix, 'r');
  EXPECT_EQ(info(Family::dead_row).file_prefix, 'd');
  EXPECT_EQ(info(Family::subscription).file_prefix, 's');
  EXPECT_EQ(info(Family::row).redis_hash, "rows");
  EXPECT_EQ(info(Family::dead_row).redis_hash, "dead");
  EXPECT_EQ(info(Family::subscription).redis_hash, "subs");
}

// ---- through the writer into each backend ----

class FamilyBackend : public testing::TestWithParam<Kind> {
 protected:
  void SetUp() override {
    if (GetParam() == Kind::redis) {
      if (!redis_url()) GTEST_SKIP() << "SIOMQ_TEST_REDIS_URL is not set (scripts/test.sh starts a redis-server)";
      prefix_ = unique_prefix();
    } else {
      dir_ = std::make_unique<TempDir>();
    }
    reopen();
  }

  void TearDown() override {
    if (GetParam() != Kind::redis || !backend_) return;
    EXPECT_TRUE(erase_everything(*backend_).ok());
    if (auto admin = admin_connection())
      freeReplyObject(redisCommand(admin.get(), "DEL %s:quarantine", prefix_.c_str()));
  }

  void reopen() {
    backend_.reset();
    backend_ = GetParam() == Kind::redis ? open_redis(redis_url(), prefix_) : open_file(data_dir());
  }

  std::string data_dir() const { return (dir_->path() / "data").string(); }

  // Writes `ops` through a writer (group commit, as the server does) and waits for it.
  void write_through_writer(std::vector<std::vector<Op>> submissions) {
    Writer writer(*backend_, SyncMode::batch, std::chrono::microseconds(200));
    int failed = 0;
    for (auto& ops : submissions) writer.submit(std::move(ops), [&](const Status& st) { failed += !st.ok(); });
    writer.stop();
    EXPECT_EQ(failed, 0);
  }

  using Admin = std::unique_ptr<redisContext, void (*)(redisContext*)>;
  // A plain connection to the tests' redis (redis://host:port), for what the backend never does.
  static Admin admin_connection() {
    std::string hostport = std::string(redis_url()).substr(8);
    hostport = hostport.substr(0, hostport.find('/'));
    const int port = std::stoi(hostport.substr(hostport.rfind(':') + 1));
    Admin admin(redisConnect(hostport.substr(0, hostport.rfind(':')).c_str(), port), redisFree);
    if (admin && admin->err) admin.reset();
    return admin;
  }

  std::unique_ptr<TempDir> dir_;
  std::string prefix_;
  std::unique_ptr<Backend> backend_;
};

TEST_P(FamilyBackend, NewFamiliesGoThroughTheWriterAndLoadBackInKeyOrder) {
  StreamMessage bytes = sample_message("audit", 1);
  bytes.payload_format = StreamMessage::Payload::bytes;
  bytes.payload = all_bytes();
  bytes.headers.reset();
  bytes.attachments = {std::string("\0\1", 2)};
  write_through_writer({
      {put(sample_message("orders", 256)), put(sample_message("orders", 1)), put(bytes)},
      {put(sample_message("orders", 65536)), put(sample_message("orders", 2)), put(sample_message("orders", 3))},
      {put(sample_consumer("orders", "billing")), put(sample_consumer("orders", "audit")),
       put(sample_consumer("audit", "x"))},
      {put(sample_entry("bob")), put(sample_entry("alice")),
       put(DirectoryEntry{"auth", "default", "tokens", R"(["a","b"])", 5})},
      {erase_stream_message("orders", 3), erase_consumer_state("audit", "x"),
       erase_directory_entry("e2ee", "default", "bob"), erase_stream_message("nothing", 1)},
  });
  reopen();
  auto c = backend_->load();
  EXPECT_EQ(c.quarantined, 0u);
  ASSERT_EQ(c.stream_messages.size(), 5u);
  expect_same(c.stream_messages[0], bytes);
  const std::vector<uint64_t> orders = {1, 2, 256, 65536};
  for (size_t i = 0; i < orders.size(); ++i) expect_same(c.stream_messages[i + 1], sample_message("orders", orders[i]));
  ASSERT_EQ(c.consumers.size(), 2u);
  expect_same(c.consumers[0], sample_consumer("orders", "audit"));
  expect_same(c.consumers[1], sample_consumer("orders", "billing"));
  ASSERT_EQ(c.directory.size(), 2u);
  EXPECT_EQ(c.directory[0].directory, "auth");
  EXPECT_EQ(c.directory[0].value, R"(["a","b"])");
  expect_same(c.directory[1], sample_entry("alice"));
  EXPECT_TRUE(c.rows.empty() && c.dead.empty() && c.subscriptions.empty());
  EXPECT_FALSE(c.empty());
}

// A stream's seq is its own: each stream counts on its own, apart from the durable queues' row seq.
TEST_P(FamilyBackend, StreamSeqsArePerStreamAndApartFromRowSeqs) {
  Row row;
  row.seq = 1;
  row.payload = "{}";
  write_through_writer({{put(row), put(sample_message("a", 1)), put(sample_message("b", 1))}});
  auto c = backend_->load();
  EXPECT_EQ(c.rows.size(), 1u);
  ASSERT_EQ(c.stream_messages.size(), 2u);
  EXPECT_EQ(c.stream_messages[0].stream, "a");
  EXPECT_EQ(c.stream_messages[1].stream, "b");
  write_through_writer({{erase_row(1)}});
}

// load() orders by (stream, seq) even where the keys' bytes would not: in bytes, stream "a\0\0" seq 1
// ("a" 00 00 00 …) comes before stream "a" seq 2^53 ("a" 00 00 20 …).
TEST_P(FamilyBackend, StreamOrderIsByNameThenSeq) {
  const uint64_t kLast = uint64_t{1} << 53;
  write_through_writer({{put(sample_message("a\0\0"s, 1)), put(sample_message("a", 2)), put(sample_message("a", kLast))}});
  auto c = backend_->load();
  ASSERT_EQ(c.stream_messages.size(), 3u);
  EXPECT_EQ(c.stream_messages[0].seq, 2u);
  EXPECT_EQ(c.stream_messages[1].seq, kLast);
  EXPECT_EQ(c.stream_messages[2].stream, "a\0\0"s);
}

// An unreadable record of a new family never stops the start-up: it goes to the quarantine like a row.
TEST_P(FamilyBackend, AnUnreadableRecordOfANewFamilyIsQuarantined) {
  auto raw = [](Family family, std::string key, std::string value) {
    return Op{family, Op::Kind::put, std::move(key), std::move(value)};
  };
  write_through_writer({{
      put(sample_message("orders", 1)),
      raw(Family::stream_message, stream_message_key("orders", 2), "{]"),
      raw(Family::stream_message, stream_message_key("orders", 3), encode_stream_message(sample_message("orders", 4))),
      raw(Family::stream_message, "short", encode_stream_message(sample_message("orders", 5))),
      put(sample_consumer()),
      raw(Family::consumer_state, consumer_state_key("orders", "other"), encode_consumer_state(sample_consumer())),
      raw(Family::consumer_state, consumer_state_key("orders", "x"), R"({"stream":"orders"})"),
      put(sample_entry()),
      raw(Family::directory_entry, directory_key("e2ee", "default", "bob"), "null"),
  }});
  auto c = backend_->load();
  EXPECT_EQ(c.quarantined, 6u);
  ASSERT_EQ(c.stream_messages.size(), 1u);
  EXPECT_EQ(c.stream_messages[0].seq, 1u);
  ASSERT_EQ(c.consumers.size(), 1u);
  EXPECT_EQ(c.consumers[0].consumer, "billing");
  ASSERT_EQ(c.directory.size(), 1u);
  reopen();
  auto again = backend_->load();
  EXPECT_EQ(again.quarantined, 0u) << "moved once, not found again";
  EXPECT_EQ(again.stream_messages.size(), 1u);
  EXPECT_EQ(again.consumers.size(), 1u);
  EXPECT_EQ(again.directory.size(), 1u);
}

// Where each family's records are: file keys and redis fields as file_store.cc and redis_store.cc say.
TEST_P(FamilyBackend, RecordsAreWhereTheLayoutSays) {
  Row row;
  row.seq = 258;
  row.payload = "{}";
  SubscriptionRecord sub{"r", "k", "c", "{}"};
  write_through_writer({{put(row), put(DeadRow{row, "x", 1}), put(sub), put(sample_message("orders", 258)),
                         put(sample_consumer()), put(sample_entry())}});
  const std::vector<std::pair<std::string, std::string>> expected = {
      // (file key, redis hash:field)
      {"r\0\0\0\0\0\0\1\2"s, "rows:258"},
      {"d\0\0\0\0\0\0\1\2"s, "dead:258"},
      {"sr\0k\0c"s, "subs:r\0k\0c"s},
      {"lorders\0\0\0\0\0\0\0\1\2"s, "stream:orders\0\0\0\0\0\0\0\1\2"s},
      {"corders\0billing"s, "consumers:orders\0billing"s},
      {"ee2ee\0default\0alice"s, "directory:e2ee\0default\0alice"s},
  };
  if (GetParam() == Kind::file) {
    backend_.reset();
    rocksdb::DB* raw = nullptr;
    ASSERT_TRUE(rocksdb::DB::OpenForReadOnly(rocksdb::Options(), data_dir(), &raw).ok());
    std::unique_ptr<rocksdb::DB> db(raw);
    for (const auto& [key, field] : expected) {
      std::string value;
      EXPECT_TRUE(db->Get(rocksdb::ReadOptions(), key, &value).ok()) << field;
    }
    db.reset();
    reopen();
    return;
  }
  auto admin = admin_connection();
  ASSERT_TRUE(admin);
  for (const auto& [key, where] : expected) {
    const std::string hash = prefix_ + ":" + where.substr(0, where.find(':'));
    const std::string field = where.substr(where.find(':') + 1);
    auto* reply = static_cast<redisReply*>(
        redisCommand(admin.get(), "HEXISTS %b %b", hash.data(), hash.size(), field.data(), field.size()));
    ASSERT_TRUE(reply);
    EXPECT_EQ(reply->integer, 1) << where;
    freeReplyObject(reply);
  }
}

// A data directory or a redis written before families existed (by hand here, as that code wrote them)
// loads as it did.
TEST_P(FamilyBackend, TyoMqRecordsWrittenBeforeFamiliesLoad) {
  Row row;
  row.seq = 5;
  row.id = "msg-1";
  row.payload = R"({"event":"e"})";
  const DeadRow dead{row, "expired", 9};
  const SubscriptionRecord sub{"default", "p-e", "c", R"({"ack":true})"};
  if (GetParam() == Kind::file) {
    backend_.reset();
    rocksdb::DB* raw = nullptr;
    ASSERT_TRUE(rocksdb::DB::Open(rocksdb::Options(), data_dir(), &raw).ok());
    std::unique_ptr<rocksdb::DB> db(raw);
    ASSERT_TRUE(db->Put(rocksdb::WriteOptions(), std::string("r\0\0\0\0\0\0\0\5", 9), encode_row(row)).ok());
    ASSERT_TRUE(db->Put(rocksdb::WriteOptions(), std::string("d\0\0\0\0\0\0\0\5", 9), encode_dead_row(dead)).ok());
    ASSERT_TRUE(db->Put(rocksdb::WriteOptions(), "s" + subscription_id(sub.realm, sub.key, sub.consumer),
                        encode_subscription(sub))
                    .ok());
  } else {
    auto admin = admin_connection();
    ASSERT_TRUE(admin);
    const std::string id = subscription_id(sub.realm, sub.key, sub.consumer);
    for (const auto& [hash, field, value] :
         std::vector<std::tuple<std::string, std::string, std::string>>{{"rows", "5", encode_row(row)},
                                                                        {"dead", "5", encode_dead_row(dead)},
                                                                        {"subs", id, encode_subscription(sub)}}) {
      const std::string key = prefix_ + ":" + hash;
      freeReplyObject(redisCommand(admin.get(), "HSET %b %b %b", key.data(), key.size(), field.data(), field.size(),
                                   value.data(), value.size()));
    }
  }
  reopen();
  auto c = backend_->load();
  EXPECT_EQ(c.quarantined, 0u);
  ASSERT_EQ(c.rows.size(), 1u);
  EXPECT_EQ(encode_row(c.rows[0]), encode_row(row));
  ASSERT_EQ(c.dead.size(), 1u);
  EXPECT_EQ(encode_dead_row(c.dead[0]), encode_dead_row(dead));
  ASSERT_EQ(c.subscriptions.size(), 1u);
  EXPECT_EQ(encode_subscription(c.subscriptions[0]), encode_subscription(sub));
}

INSTANTIATE_TEST_SUITE_P(Store, FamilyBackend, testing::Values(Kind::file, Kind::redis),
                         [](const auto& info) { return info.param == Kind::file ? "File" : "Redis"; });

TEST(MemoryBackend, KeepsNoRecordOfAnyFamily) {
  auto b = open_memory();
  Writer writer(*b, SyncMode::batch, std::chrono::microseconds(200));
  writer.submit({put(sample_message()), put(sample_consumer()), put(sample_entry())}, {});
  writer.stop();
  EXPECT_TRUE(b->load().empty());
}

}  // namespace
}  // namespace siomq::store
