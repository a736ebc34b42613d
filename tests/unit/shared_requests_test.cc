// The documents a cluster shares besides its settings (tyo-mq §10): the enrolment requests
// (<c>:authreqs, cluster/shared_requests.h) — filed in the reference's shape, superseded, capped, polled
// oldest first, decided once, pruned — and the E2EE key directory (<c>:e2eekeys, cluster/shared_keys.h);
// a reference node's entries read; junk in Redis refused or left alone, never trusted.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <string>

#include "auth/hmac.h"
#include "cluster/shared_keys.h"
#include "cluster/shared_requests.h"
#include "wire/js_json.h"

namespace siomq::cluster {
namespace {

using nlohmann::json;

constexpr int64_t kNow = 1'800'000'000'000;

auth::AuthorizationRequest request(const std::string& id, const std::string& realm, const std::string& client) {
  auth::AuthorizationRequest r;
  r.request_id = id;
  r.realm = realm;
  r.role = "consumer";
  r.client_id = client;
  r.client_name = "phone";
  r.client_token = "tok-" + client;
  r.challenge_response_json = R"({"code":[1,2]})";
  return r;
}

SharedRequests parsed(const std::optional<std::string>& text) {
  auto doc = SharedRequests::parse(text);
  EXPECT_TRUE(doc) << (doc ? "" : doc.error().message);
  return doc ? std::move(*doc) : SharedRequests();
}

TEST(SharedRequests, FilesInTheReferenceShapeAndPollsOldestFirst) {
  SharedRequests doc = parsed(std::nullopt);
  ASSERT_TRUE(doc.file(request("r1", "shop", "a"), "sock-1", "node-a", 0, kNow));
  ASSERT_TRUE(doc.file(request("r2", "shop", "b"), "sock-2", "node-b", 0, kNow + 5));
  json stored = json::parse(doc.text())["r1"];
  EXPECT_EQ(stored, (json{{"request_id", "r1"},
                          {"status", "pending"},
                          {"realm", "shop"},
                          {"role", "consumer"},
                          {"client_id", "a"},
                          {"client_name", "phone"},
                          {"client_token", "tok-a"},
                          {"client_token_hash", auth::sha256_hex("tok-a")},
                          {"challenge_response", {{"code", {1, 2}}}},
                          {"created_at", "2027-01-15T08:00:00.000Z"},
                          {"socket_id", "sock-1"},
                          {"node_id", "node-a"}}));
  json next = parsed(doc.text()).next_public(std::nullopt);
  EXPECT_EQ(next["request_id"], "r1");
  EXPECT_FALSE(next.contains("client_token"));
  EXPECT_FALSE(next.contains("socket_id"));
  EXPECT_EQ(next["client_token_hash"], auth::sha256_hex("tok-a"));
  EXPECT_EQ(doc.next_public(std::string("other")), json());
}

TEST(SharedRequests, SupersedesTheSameClientsPendingRequestAndKeepsTheCaps) {
  SharedRequests doc = parsed(std::nullopt);
  ASSERT_TRUE(doc.file(request("r1", "shop", "a"), "s", "n", 0, kNow));
  ASSERT_TRUE(doc.file(request("r2", "shop", "a"), "s", "n", 0, kNow + 1));
  EXPECT_EQ(json::parse(doc.text())["r1"]["status"], "superseded");
  EXPECT_FALSE(doc.pending("r1"));
  EXPECT_TRUE(doc.pending("r2"));
  for (size_t i = 1; i < auth::kMaxPendingPerRealm; ++i)
    ASSERT_TRUE(doc.file(request("x" + std::to_string(i), "shop", "c" + std::to_string(i)), "s", "n", 0, kNow));
  auto full = doc.file(request("over", "shop", "new"), "s", "n", 0, kNow);
  ASSERT_FALSE(full);
  EXPECT_EQ(full.error().code, 429);
  // Another realm has room until the server-wide cap (here 101).
  EXPECT_TRUE(doc.file(request("y", "other", "c"), "s", "n", 101, kNow));
  EXPECT_EQ(doc.file(request("z", "other", "d"), "s", "n", 101, kNow).error().code, 429);
}

TEST(SharedRequests, OneRealmsPendingBytesAreBoundedAndPendingRequestsExpireAfterADay) {
  SharedRequests doc = parsed(std::nullopt);
  size_t filed = 0;
  Status last = Ok{};
  while (last && filed < auth::kMaxPendingPerRealm) {
    auto r = request("big" + std::to_string(filed), "shop", "c" + std::to_string(filed));
    r.client_name = std::string(4000, 'n');
    r.client_token = std::string(4000, 't');
    r.challenge_response_json = "\"" + std::string(4000, 'x') + "\"";
    last = doc.file(r, "s", "n", 0, kNow);
    filed += static_cast<bool>(last);
  }
  ASSERT_FALSE(last);
  EXPECT_EQ(last.error().code, 429);
  EXPECT_LT(filed, auth::kMaxPendingPerRealm);  // the bytes ran out first
  EXPECT_TRUE(doc.file(request("small", "other", "a"), "s", "n", 0, kNow));  // another realm still files
  // A day later, the unanswered ones are gone and the realm files again.
  EXPECT_TRUE(doc.file(request("later", "shop", "z"), "s", "n", 0, kNow + kKeepDecidedMs + 1));
  EXPECT_FALSE(doc.pending("big0"));
}

TEST(SharedRequests, DecidesOnceAndKeepsTheDecisionForADay) {
  SharedRequests doc = parsed(std::nullopt);
  ASSERT_TRUE(doc.file(request("r1", "shop", "a"), "sock", "node-a", 0, kNow));
  auto d = doc.decide("r1", true, "producer", std::string("ok"), kNow + 10);
  ASSERT_TRUE(d) << d.error().message;
  EXPECT_EQ(d->request.status, "approved");
  EXPECT_EQ(d->request.role, "producer");
  EXPECT_EQ(d->request.node_id, "node-a");
  EXPECT_EQ(d->request.socket_id, "sock");
  EXPECT_EQ(d->stored["decision_reason"], "ok");
  EXPECT_EQ(d->shown["decided_at"], "2027-01-15T08:00:00.010Z");
  EXPECT_EQ(doc.decide("r1", false, "", std::nullopt, kNow).error().code, 404);
  EXPECT_EQ(doc.decide("nope", false, "", std::nullopt, kNow).error().code, 404);
  // The decision note carries the stored request; its own node skips it.
  std::string note = encode_decision_note("node-b", d->stored);
  auto read = decode_decision_note(note, "node-a");
  ASSERT_TRUE(read);
  EXPECT_EQ(read->request_id, "r1");
  EXPECT_EQ(read->decision_reason, "ok");
  EXPECT_FALSE(decode_decision_note(note, "node-b"));
  // A day later the next filing drops it.
  ASSERT_TRUE(doc.file(request("r2", "shop", "b"), "s", "n", 0, kNow + kKeepDecidedMs + 11));
  EXPECT_FALSE(json::parse(doc.text()).contains("r1"));
}

TEST(SharedRequests, ReadsAReferenceNodesEntriesAndLeavesJunkAlone) {
  // Written by a reference node (null socket and node on a node without a cluster), beside junk.
  std::string text = R"({"ref-1":{"request_id":"ref-1","status":"pending","realm":"shop","role":"both",)"
                     R"("client_id":"c","client_name":"n","client_token":"t","client_token_hash":"h",)"
                     R"("challenge_response":null,"created_at":"2027-01-15T07:00:00.000Z","socket_id":null,"node_id":null},)"
                     R"("junk":5,"half":{"request_id":"half","status":"pending","realm":7}})";
  SharedRequests doc = parsed(text);
  auto r = doc.pending("ref-1");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->node_id, "");
  EXPECT_FALSE(doc.pending("half"));
  EXPECT_FALSE(doc.pending("junk"));
  EXPECT_EQ(doc.next_public(std::nullopt)["request_id"], "ref-1");
  ASSERT_TRUE(doc.file(request("r2", "shop", "b"), "s", "n", 0, kNow));
  json after = json::parse(doc.text());
  EXPECT_EQ(after["junk"], 5);
  EXPECT_TRUE(after.contains("half"));
  doc.remove_realm("shop");
  EXPECT_FALSE(json::parse(doc.text()).contains("ref-1"));
  EXPECT_FALSE(json::parse(doc.text()).contains("r2"));
}

TEST(SharedRequests, RefusesWhatItCannotReadRatherThanOverwriteIt) {
  for (const std::string& bad : {std::string("not json"), std::string("[1,2]"), std::string("\"text\""), std::string(2000, '[') + std::string(2000, ']')}) {
    auto doc = SharedRequests::parse(bad);
    ASSERT_FALSE(doc) << bad.substr(0, 20);
    EXPECT_EQ(doc.error().code, 503);
  }
  EXPECT_FALSE(SharedRequests::parse(std::string(kMaxDocumentBytes + 1, ' ')));
  EXPECT_FALSE(decode_decision_note("{\"node_id\":\"x\"}", "y"));
  EXPECT_FALSE(decode_decision_note("{\"node_id\":\"x\",\"request\":{\"request_id\":1}}", "y"));
}

TEST(SharedRequests, DropsTheOldestSettledRequestsToStayUnderTheEntryCap) {
  json many = json::object();
  for (size_t i = 0; i < kMaxEntries; ++i) {
    std::string id = "old-" + std::to_string(100000 + i);
    many[id] = {{"request_id", id}, {"status", "rejected"}, {"realm", "r"}, {"role", "both"}, {"client_id", id},
                {"client_name", "n"}, {"client_token", "t"}, {"decided_at", "2027-01-15T07:00:00.000Z"}};
  }
  SharedRequests doc = parsed(many.dump());
  ASSERT_TRUE(doc.file(request("new", "shop", "a"), "s", "n", 0, kNow));
  json after = json::parse(doc.text());
  EXPECT_EQ(after.size(), kMaxEntries);
  EXPECT_TRUE(after.contains("new"));
}

TEST(SharedKeys, PublishesInTheReferenceShapeCapsPerIdentityAndSkipsJunk) {
  auto doc = SharedKeys::parse(std::nullopt);
  ASSERT_TRUE(doc);
  broker::PublicKey k{"k1", "ecdh-es-p256-a256gcm", "QUxJQ0U=", kNow};
  broker::KeyDirectoryLimits two;
  two.max_keys_per_identity = 2;
  two.max_entries_per_realm = 1;
  auto keys = doc->publish("default", "alice", k, two);
  ASSERT_TRUE(keys);
  EXPECT_EQ(json::parse(doc->text()),
            json::parse(R"({"default":{"alice":[{"key_id":"k1","alg":"ecdh-es-p256-a256gcm","public_key":"QUxJQ0U=",)"
                        R"("updated_at":"2027-01-15T08:00:00.000Z"}]}})"));
  k.public_key = "TkVX";
  ASSERT_TRUE(doc->publish("default", "alice", k, two));  // same key_id: replaced
  ASSERT_TRUE(doc->publish("default", "alice", {"k2", "", "Szo=", kNow}, two));
  EXPECT_EQ(doc->publish("default", "alice", {"k3", "", "Szo=", kNow}, two).error().code, 429);
  // The realm's identities are capped in the transaction too (another realm has its own room).
  EXPECT_EQ(doc->publish("default", "bob", {"k1", "", "Szo=", kNow}, two).error().code, 507);
  EXPECT_TRUE(doc->publish("other", "bob", {"k1", "", "Szo=", kNow}, two));
  auto again = SharedKeys::parse(doc->text());
  ASSERT_TRUE(again);
  auto read = again->keys("default", "alice", 8);
  ASSERT_EQ(read.size(), 2u);
  EXPECT_EQ(read[0], (broker::PublicKey{"k1", "ecdh-es-p256-a256gcm", "TkVX", kNow}));
  // A reference node's document with junk: bad keys and non-objects skipped, the rest read.
  auto mixed = SharedKeys::parse(std::string(
      R"({"r":{"bob":[{"key_id":"ok","public_key":"Qk9C","updated_at":"2027-01-15T08:00:00.000Z"},)"
      R"({"key_id":"bad","public_key":"not base64!"},{"key_id":"","public_key":"QQ=="},5],"eve":"x"},"junk":[1]})"));
  ASSERT_TRUE(mixed);
  EXPECT_EQ(mixed->keys("r", "bob", 8), (std::vector<broker::PublicKey>{{"ok", "", "Qk9C", kNow}}));
  size_t identities = 0;
  mixed->for_each(8, [&](const std::string& realm, const std::string& identity, std::vector<broker::PublicKey> ks) {
    ++identities;
    EXPECT_EQ(realm, "r");
    EXPECT_EQ(identity, "bob");
    EXPECT_EQ(ks.size(), 1u);
  });
  EXPECT_EQ(identities, 1u);
  mixed->remove_realm("r");
  EXPECT_TRUE(mixed->keys("r", "bob", 8).empty());
  EXPECT_FALSE(SharedKeys::parse(std::string("[]")));
  EXPECT_FALSE(SharedKeys::parse(std::string(kMaxKeysDocumentBytes + 1, ' ')));
}

TEST(SharedKeys, TheChangeNoteRoundTripsAndJunkIsNoNote) {
  auto note = decode_keys_note(encode_keys_note({"node-a", "default", "alice"}));
  ASSERT_TRUE(note);
  EXPECT_EQ(note->node_id, "node-a");
  EXPECT_EQ(note->identity, "alice");
  EXPECT_FALSE(decode_keys_note(R"({"node_id":"a","realm":"r"})"));
  EXPECT_FALSE(decode_keys_note("not json"));
}

TEST(IsoDate, ReadsBackExactlyWhatItWrites) {
  for (int64_t ms : {int64_t{0}, kNow, int64_t{951'782'400'123} /* 2000-02-29 */, int64_t{4'102'444'799'999}})
    EXPECT_EQ(js::parse_iso_date(js::iso_date(ms)), ms) << js::iso_date(ms);
  for (const char* bad : {"", "2027-01-15T08:00:00Z", "2027-01-15T08:00:00.000+01", "2027-13-15T08:00:00.000Z",
                          "2027-01-15 08:00:00.000Z", "20x7-01-15T08:00:00.000Z"})
    EXPECT_FALSE(js::parse_iso_date(bad)) << bad;
}

}  // namespace
}  // namespace siomq::cluster
