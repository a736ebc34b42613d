#include "surfaces/tyo_mq/requests.h"

#include <gtest/gtest.h>

#include "wire/json_outline.h"

namespace siomq::surfaces {
namespace {

// The request object of ["EVENT", payload].
std::string_view object_of(const std::string& args, std::string& storage) {
  auto r = request_object(args, storage);
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message);
  return r.ok() ? *r : std::string_view();
}

TEST(RequestObject, ObjectsAndJsonStringsAreAccepted) {
  std::string storage;
  std::string args = R"(["PRODUCE",{"event":"e"}])";
  EXPECT_EQ(object_of(args, storage), R"({"event":"e"})");
  std::string quoted = R"(["PRODUCE","{\"event\":\"e\",\"message\":\"a\\\"b\"}"])";
  EXPECT_EQ(object_of(quoted, storage), R"({"event":"e","message":"a\"b"})");
}

TEST(RequestObject, AnythingElseIsMalformed) {
  std::string storage;
  for (std::string args : {R"(["PRODUCE"])", R"(["PRODUCE",null])", R"(["PRODUCE",42])", R"(["PRODUCE",[1]])",
                           R"(["PRODUCE","not json"])", R"(["PRODUCE","[1,2]"])", R"(["PRODUCE","{\"a\":"])"}) {
    auto r = request_object(args, storage);
    ASSERT_FALSE(r.ok()) << args;
    EXPECT_EQ(r.error().code, kMalformedRequest);
  }
}

TEST(ParseSubscribe, DefaultsAliasesAndNestedOptions) {
  auto r = parse_subscribe(R"({"event":"Hello","producer":"ProdA","consumer":"c1","consumerId":"q1",
      "requireAck":true,"options":{"durable":1,"ack_timeout":"2s","retry":{"max_attempts":3},"mode":"topic","group":"g"}})");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->event, "Hello");
  EXPECT_EQ(r->producer, "ProdA");
  EXPECT_EQ(r->consumer, "c1");
  EXPECT_EQ(r->consumer_id, "q1");
  EXPECT_FALSE(r->id);
  EXPECT_TRUE(r->durable);
  EXPECT_TRUE(r->ack);
  EXPECT_EQ(r->ack_timeout, R"("2s")");
  EXPECT_EQ(r->retry, R"({"max_attempts":3})");
  EXPECT_EQ(r->mode, "topic");
  EXPECT_EQ(r->group, "g");

  auto d = parse_subscribe(R"({"event":"e","durable":false,"options":{"durable":true},"manual_ack":0})");
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->producer, "ANONYMOUS");
  EXPECT_EQ(d->consumer, "ANONYMOUS");
  EXPECT_EQ(d->scope, "default");
  EXPECT_TRUE(d->durable);  // obj.durable || options.durable
  EXPECT_FALSE(d->ack);
  EXPECT_FALSE(d->group);
}

TEST(ParseSubscribe, MalformedFieldsAreErrors) {
  auto missing = parse_subscribe(R"({"producer":"p"})");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().message, "Message name should be a object");
  EXPECT_EQ(missing.error().code, kBareStringError);
  EXPECT_FALSE(parse_subscribe(R"({"event":""})").ok());
  for (const char* bad : {R"({"event":5})", R"({"event":"e","producer":{}})", R"({"event":"e","consumer":[1]})",
                          R"({"event":"e","retry":"3"})", R"({"event":"e","options":{"group":7}})", "[]", "{"}) {
    auto r = parse_subscribe(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.error().code, kMalformedRequest);
  }
}

TEST(ParseProduce, FieldsAndRawSpans) {
  auto r = parse_produce(R"({"event":"order","message":{"n": [1, 2.50]},"from":"svc","guaranteed_delivery":true,
      "ttl":60,"to":["x"],"enc":{"v":1},"contentType":"text/plain","id":"m1"})");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->event, "order");
  EXPECT_EQ(r->message, R"({"n": [1, 2.50]})");  // relayed as sent, not re-encoded
  EXPECT_EQ(r->from, "svc");
  EXPECT_TRUE(r->guaranteed);
  EXPECT_EQ(r->ttl, "60");
  EXPECT_EQ(r->to, R"(["x"])");
  EXPECT_EQ(r->enc, R"({"v":1})");
  EXPECT_EQ(r->content_type, "text/plain");
  EXPECT_EQ(r->id, "m1");
  EXPECT_FALSE(r->broadcast);

  auto b = parse_produce(R"({"event":"e","from":"p","method":"broadcast","broadcast":"group","group":"g","delivery":"guaranteed"})");
  ASSERT_TRUE(b.ok());
  EXPECT_TRUE(b->broadcast);
  EXPECT_EQ(b->broadcast_scope, "group");
  EXPECT_EQ(b->group, "g");
  EXPECT_TRUE(b->guaranteed);
  auto plain = parse_produce(R"({"event":"e","broadcast":"realm"})");
  ASSERT_TRUE(plain.ok());
  EXPECT_FALSE(plain->broadcast);  // `broadcast` without method:"broadcast" does nothing
  EXPECT_EQ(plain->from, "ANONYMOUS");
  EXPECT_TRUE(plain->message.empty());
}

TEST(ParseProduce, MalformedRequestsAreErrors) {
  for (const char* bad : {R"({})", R"({"event":null})", R"({"event":""})", R"({"event":7})",
                          R"({"event":"e","from":5})", R"({"event":"e","method":"broadcast"})", R"({"event":"e","contentType":{}})"}) {
    auto r = parse_produce(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.error().code, kMalformedRequest);
    EXPECT_FALSE(r.error().message.empty());
  }
}

}  // namespace
}  // namespace siomq::surfaces

namespace siomq::surfaces {
namespace {

TEST(ParseRegistration, NameMustBeAStringIdIsOptional) {
  auto r = parse_registration(R"({"name":"svc","id":"x1"})");
  EXPECT_EQ(r.name, "svc");
  EXPECT_EQ(r.id, "x1");
  auto bare = parse_registration(R"({"name":"svc","id":""})");
  EXPECT_FALSE(bare.id);
  EXPECT_FALSE(parse_registration(R"({"name":5})").name);
  EXPECT_FALSE(parse_registration("{}").name);
}

TEST(ParseProduceChunk, FieldsAndBounds) {
  auto c = parse_produce_chunk(R"({"transferId":"t1","index":1,"total":3,"data":"a\"b"})");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->transfer_id, "t1");
  EXPECT_EQ(c->index, 1u);
  EXPECT_EQ(c->total, 3u);
  EXPECT_EQ(c->data, "a\"b");
  for (const char* bad : {R"({"index":0,"total":1})", R"({"transferId":"t","index":2,"total":2})",
                          R"({"transferId":"t","index":0,"total":0})", R"({"transferId":"t","index":-1,"total":2})"}) {
    auto r = parse_produce_chunk(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.error().code, kMalformedRequest);
  }
}

// A request read through the packet's one-pass notes (json::Outline) reads exactly as one read by scanning,
// whatever the payload: escaped, duplicated, long or many keys, a JSON string payload, bad fields.
TEST(OutlinedRequest, ReadsAsTheScannedOne) {
  std::string many = R"({"event":"e")";
  for (int i = 0; i < 40; ++i) many += ",\"k" + std::to_string(i) + "\":" + std::to_string(i);
  many += R"(,"from":"last"})";
  const std::string long_escaped_key = "\"" + std::string(5000, 'a') + "\\u0041\"";
  for (std::string payload :
       {std::string(R"({"event":"e","from":"a","from":"b","message":{"x":[1,"]"]}})"),
        std::string(R"({"ev\u0065nt":"e","\u0066rom":"p","guaranteed":true})"),
        std::string(R"({"event":"e",)") + long_escaped_key + R"(:1,"ttl":5})", many,
        std::string(R"("{\"event\":\"in a string\"}")"), std::string(R"({"event":7})"),
        std::string(R"({"event":"e","method":"broadcast"})"), std::string("{}"), std::string("[1]"),
        std::string(R"({"msgId":"m1","msg_id":"m2"})"), std::string(R"({"id":42})")}) {
    const std::string args = R"(["PRODUCE",)" + payload + "]";
    ::siomq::json::Outline outline;
    ASSERT_TRUE(::siomq::json::validate(args, &outline).ok()) << args;
    std::string storage, scanned_storage;
    auto object = request_object(args, storage, &outline);
    auto scanned_object = request_object(args, scanned_storage);
    ASSERT_EQ(object.ok(), scanned_object.ok()) << args;
    if (!object) continue;
    EXPECT_EQ(*object, *scanned_object);
    auto p = parse_produce(*object, {args, &outline});
    auto q = parse_produce(*scanned_object);
    ASSERT_EQ(p.ok(), q.ok()) << args;
    if (p) {
      EXPECT_EQ(p->event, q->event);
      EXPECT_EQ(p->from, q->from);
      EXPECT_EQ(p->message, q->message);
      EXPECT_EQ(p->guaranteed, q->guaranteed);
      EXPECT_EQ(p->ttl, q->ttl);
    } else {
      EXPECT_EQ(p.error().message, q.error().message);
    }
    auto a = parse_ack(*object, {args, &outline});
    auto b = parse_ack(*scanned_object);
    ASSERT_EQ(a.ok(), b.ok()) << args;
    if (a) EXPECT_EQ(*a, *b);
  }
  // Without a second element: the same error either way.
  ::siomq::json::Outline outline;
  std::string storage;
  ASSERT_TRUE(::siomq::json::validate(R"(["PRODUCE"])", &outline).ok());
  auto missing = request_object(R"(["PRODUCE"])", storage, &outline);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().message, "missing payload");
}

TEST(ParseAck, IdFromAnyAliasAndTheReferenceMessages) {
  EXPECT_EQ(*parse_ack(R"({"msgId":"msg-a"})"), "msg-a");
  EXPECT_EQ(*parse_ack(R"({"msg_id":"msg-b"})"), "msg-b");
  EXPECT_EQ(*parse_ack(R"({"id":"msg-c"})"), "msg-c");
  EXPECT_EQ(*parse_ack(R"({"id":42})"), "42");
  auto none = parse_ack(R"({"msgId":""})");
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.error().code, 400);
  EXPECT_EQ(none.error().message, "ACK requires msgId");
  EXPECT_EQ(parse_ack("[1]").error().message, "Invalid ACK JSON");
}

TEST(ParseDuration, NumbersAreSecondsStringsTakeUnits) {
  EXPECT_EQ(parse_duration_ms("30"), 30000);
  EXPECT_EQ(parse_duration_ms("0.25"), 250);
  EXPECT_EQ(parse_duration_ms(R"("300ms")"), 300);
  EXPECT_EQ(parse_duration_ms(R"("1.5S")"), 1500);
  EXPECT_EQ(parse_duration_ms(R"("2m")"), 120000);
  EXPECT_EQ(parse_duration_ms(R"("1h")"), 3600000);  // §0 row 7: h and d everywhere
  EXPECT_EQ(parse_duration_ms(R"("1d")"), 86400000);
  EXPECT_EQ(parse_duration_ms(R"("7")"), 7000);
  for (const char* absent : {"", "0", R"("")", R"("0s")", R"("abc")", R"("-5s")", R"("1w")", "true", "null", "-3", R"(".5s")"})
    EXPECT_EQ(parse_duration_ms(absent), std::nullopt) << absent;
}

TEST(DeliveryPolicy, DefaultsAndRetryFields) {
  SubscribeRequest r;
  auto p = delivery_policy(r);
  EXPECT_FALSE(p.ack);
  EXPECT_EQ(p.ack_timeout_ms, 30000);
  EXPECT_EQ(p.max_attempts, 3);
  EXPECT_EQ(p.retry_delay_ms, 5000);
  EXPECT_FALSE(p.exponential);
  auto sub = parse_subscribe(
      R"({"event":"e","options":{"ack":true,"ack_timeout":"300ms","retry":{"maxAttempts":"5","delay":"100ms","backoff":"exponential"}}})");
  ASSERT_TRUE(sub.ok());
  p = delivery_policy(*sub);
  EXPECT_TRUE(p.ack);
  EXPECT_EQ(p.ack_timeout_ms, 300);
  EXPECT_EQ(p.max_attempts, 5);
  EXPECT_EQ(p.retry_delay_ms, 100);
  EXPECT_TRUE(p.exponential);
  // max(1, Number(x) || 3): zero means the default, negatives mean one attempt, fractions round up.
  for (auto [json, expected] : std::vector<std::pair<const char*, int>>{
           {R"({"event":"e","retry":{"max_attempts":0}})", 3},
           {R"({"event":"e","retry":{"max_attempts":-4}})", 1},
           {R"({"event":"e","retry":{"max_attempts":2.5}})", 3},
           {R"({"event":"e","retry":{"max_attempts":"x"}})", 3},
           {R"({"event":"e","retry":{"backoff":"linear"}})", 3}}) {
    auto s = parse_subscribe(json);
    ASSERT_TRUE(s.ok()) << json;
    EXPECT_EQ(delivery_policy(*s).max_attempts, expected) << json;
  }
}

TEST(Ttl, MessageThenLifespanThenProducerThenStore) {
  auto produce = [](const char* json) { return *parse_produce(json); };
  const std::optional<int64_t> store = 86400000, producer = 5000;
  EXPECT_EQ(effective_ttl(produce(R"({"event":"e","ttl":2})"), producer, store), 2000);
  EXPECT_EQ(effective_ttl(produce(R"({"event":"e","ttl":"1h"})"), producer, store), 3600000);
  EXPECT_EQ(effective_ttl(produce(R"({"event":"e","ttl":0})"), producer, store), 0);  // expires at once
  EXPECT_EQ(effective_ttl(produce(R"({"event":"e","ttl":-1})"), producer, store), std::nullopt);  // never
  EXPECT_EQ(effective_ttl(produce(R"({"event":"e","ttl":"soon"})"), producer, store), std::nullopt);
  EXPECT_EQ(effective_ttl(produce(R"({"event":"e","lifespan":3})"), producer, store), 3000);
  EXPECT_EQ(effective_ttl(produce(R"({"event":"e","lifespan":-1})"), producer, store), 5000);  // -1: not a TTL
  EXPECT_EQ(effective_ttl(produce(R"({"event":"e","ttl":null,"lifespan":4})"), producer, store), 4000);
  EXPECT_EQ(effective_ttl(produce(R"({"event":"e"})"), producer, store), 5000);
  EXPECT_EQ(effective_ttl(produce(R"({"event":"e"})"), std::nullopt, store), 86400000);
  EXPECT_EQ(effective_ttl(produce(R"({"event":"e"})"), -1, store), std::nullopt);  // the producer's "never"
  EXPECT_EQ(effective_ttl(produce(R"({"event":"e","ttl":true})"), std::nullopt, store), 86400000);
}

}  // namespace
}  // namespace siomq::surfaces
