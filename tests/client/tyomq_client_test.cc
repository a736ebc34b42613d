// siomq::tyomq::Client and Manager against a real siomq-server: every public call, and what a
// reconnect must keep — authentication, registrations, subscriptions and the durable backlog — after a
// kill -9 of the server and after a disconnect the server forces.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <future>
#include <set>
#include <thread>

#include "client_test_util.h"
#include "server_process.h"
#include "siomq/tyomq.h"
#include "siomq/tyomq_manage.h"

namespace siomq::test {
namespace {

using namespace std::chrono_literals;
using tyomq::Client;
using tyomq::ConsumedMessage;

constexpr const char* kAdmin = "admin-secret-token";

// Auth on: an admin token, a realm r1 with a manager key and a pre-shared key, tokens for it, a JWT
// secret; the default realm open.
std::string auth_settings() {
  return R"({"auth":{"enabled":true,
    "tokens":[{"token":"admin-secret-token","realm":"*","role":"admin"},
              {"token":"tok-r1","realm":"r1","role":"both","client_id":"c1"}],
    "realms":{"default":{"required":false},"r1":{"manager_key":"mk-r1","key":"psk"}},
    "jwt_secret":"jwt-secret"}})";
}

class TyoMqClient : public ::testing::Test {
 protected:
  void start(ServerProcess::Config config = {}) {
    server_ = std::make_unique<ServerProcess>(std::move(config));
    std::string error;
    ASSERT_TRUE(server_->start(&error)) << error;
  }
  void SetUp() override {
    ServerProcess::Config c;
    c.settings_json = auth_settings();
    c.args = {"--storage", "file"};
    start(c);
  }
  void TearDown() override {
    if (server_) {
      EXPECT_EQ(server_->sanitizer_report(), "");
    }
  }

  Options options() {
    Options o;
    o.urls = {server_->url()};
    o.reconnect.initial_delay = 50ms;
    o.reconnect.max_delay = 300ms;
    o.request_timeout = 5s;
    return o;
  }

  std::unique_ptr<Client> client(Options o) {
    auto c = std::make_unique<Client>(std::move(o));
    auto st = c->connect().get();
    EXPECT_TRUE(st.ok()) << (st.ok() ? "" : st.error().message);
    return c;
  }
  std::unique_ptr<Client> client() { return client(options()); }

  tyomq::SubscribeRequest sub(std::string producer, std::string event, std::string consumer) {
    tyomq::SubscribeRequest r;
    r.producer = std::move(producer);
    r.event = std::move(event);
    r.consumer = std::move(consumer);
    return r;
  }

  std::unique_ptr<ServerProcess> server_;
};

TEST_F(TyoMqClient, ProduceSubscribeTopicsGroupsBroadcastAndBinary) {
  Inbox<ConsumedMessage> exact, topic, any, g1, g2, bcast;
  auto consumer = client();
  auto worker2 = client();
  auto producer = client();
  ASSERT_TRUE(consumer->register_consumer("mail").ok());
  ASSERT_TRUE(consumer->subscribe(sub("orders", "placed", "mail"), [&](const ConsumedMessage& m) { exact.push(m); }).ok());
  tyomq::SubscribeRequest t = sub("", "shop/+/paid", "mail");
  t.mode = "topic";
  ASSERT_TRUE(consumer->subscribe(t, [&](const ConsumedMessage& m) { topic.push(m); }).ok());
  ASSERT_TRUE(consumer->subscribe(sub(std::string(tyomq::kAllProducers), "placed", "mail"), [&](const ConsumedMessage& m) { any.push(m); }).ok());
  tyomq::SubscribeRequest grouped = sub("orders", "work", "w1");
  grouped.group = "workers";
  ASSERT_TRUE(consumer->register_consumer("w1").ok());
  ASSERT_TRUE(consumer->subscribe(grouped, [&](const ConsumedMessage& m) { g1.push(m); }).ok());
  grouped.consumer = "w2";
  ASSERT_TRUE(worker2->register_consumer("w2").ok());
  ASSERT_TRUE(worker2->subscribe(grouped, [&](const ConsumedMessage& m) { g2.push(m); }).ok());
  ASSERT_TRUE(worker2->subscribe(sub("orders", "news", "w2"), [&](const ConsumedMessage& m) { bcast.push(m); }).ok());
  ASSERT_TRUE(consumer->ping().get().ok());  // the subscriptions are in before anything is produced
  ASSERT_TRUE(worker2->ping().get().ok());

  ASSERT_TRUE(producer->register_producer("orders").ok());
  ASSERT_TRUE(producer->produce("orders", "placed", R"({"id":1001})").ok());
  tyomq::ProduceRequest paid;
  paid.from = "orders";
  paid.event = "shop/eu/paid";
  paid.message = siomq::json_string("ok");
  ASSERT_TRUE(producer->produce(paid).ok());
  for (int i = 0; i < 10; ++i) ASSERT_TRUE(producer->produce("orders", "work", std::to_string(i)).ok());
  tyomq::ProduceRequest news;
  news.from = "orders";
  news.event = "news";
  news.message = R"({"b":true})";
  news.broadcast = true;
  ASSERT_TRUE(producer->produce(news).ok());
  tyomq::ProduceRequest bin;
  bin.from = "orders";
  bin.event = "placed";
  bin.message = R"({"blob":)" + siomq::attachment_placeholder(0) + "}";
  bin.attachments = {std::string("\x00\x01\x02\xff", 4)};
  ASSERT_TRUE(producer->produce(bin).ok());

  ASSERT_TRUE(exact.wait_for(2));
  auto m = exact.items()[0];
  EXPECT_EQ(m.event, "placed");
  EXPECT_EQ(m.from, "orders");
  EXPECT_EQ(m.message, R"({"id":1001})");
  EXPECT_TRUE(m.msg_id.empty());
  auto b = exact.items()[1];
  ASSERT_EQ(b.attachments.size(), 1u);
  EXPECT_EQ(b.attachments[0], std::string("\x00\x01\x02\xff", 4));
  ASSERT_TRUE(topic.wait_for(1));
  EXPECT_EQ(topic.items()[0].event, "shop/eu/paid");
  EXPECT_EQ(topic.items()[0].message, "\"ok\"");
  ASSERT_TRUE(any.wait_for(1));
  ASSERT_TRUE(eventually([&] { return g1.size() + g2.size() == 10; }));
  EXPECT_GT(g1.size(), 0u);
  EXPECT_GT(g2.size(), 0u);
  ASSERT_TRUE(bcast.wait_for(1));
  EXPECT_EQ(bcast.items()[0].message, R"({"b":true})");

  auto pong = producer->ping(R"({"n":7})").get();
  ASSERT_TRUE(pong.ok());
  EXPECT_NE(pong->find("\"pong\":\"PONG\""), std::string::npos);
  EXPECT_NE(pong->find("\"n\":7"), std::string::npos);
}

TEST_F(TyoMqClient, PublisherConfirmsAndChunkedMessagesBothWays) {
  Inbox<ConsumedMessage> got;
  auto consumer = client();
  ASSERT_TRUE(consumer->register_consumer("big").ok());
  tyomq::SubscribeRequest r = sub("p", "blob", "big");
  r.durable = true;
  ASSERT_TRUE(consumer->subscribe(r, [&](const ConsumedMessage& m) { got.push(m); }).ok());
  ASSERT_TRUE(consumer->ping().get().ok());
  auto producer = client();
  // 600 KB of text with multi-byte characters: PRODUCE_CHUNK pieces up, CONSUME_CHUNK pieces down.
  std::string text;
  while (text.size() < 600000) text += "é€😀 chunk ";
  tyomq::ProduceRequest big;
  big.from = "p";
  big.event = "blob";
  big.message = siomq::json_string(text);
  auto stored = producer->produce_confirmed(big).get();
  ASSERT_TRUE(stored.ok()) << stored.error().message;
  EXPECT_EQ(*stored, 0u);  // delivered live, nothing left to store
  ASSERT_TRUE(got.wait_for(1));
  EXPECT_EQ(got.items()[0].message, siomq::json_string(text));

  // The consumer offline (once the server has seen it go): its copy is stored, and the confirm says so
  // once it is durable.
  consumer.reset();
  tyomq::ProduceRequest small;
  small.from = "p";
  small.event = "blob";
  small.message = "42";
  EXPECT_TRUE(eventually([&] {
    auto one = producer->produce_confirmed(small).get();
    return one.ok() && *one == 1u;
  }));
  tyomq::ProduceRequest nameless;
  EXPECT_EQ(code_of(producer->produce_confirmed(nameless).get()), errc::bad_request);
}

TEST_F(TyoMqClient, DurableAckManualAckRetriesAndTheDeadLetterQueue) {
  Inbox<ConsumedMessage> auto_acked, manual, dead;
  auto producer = client();
  auto consumer = client();
  ASSERT_TRUE(consumer->register_consumer("c").ok());
  tyomq::SubscribeRequest a = sub("p", "auto", "c");
  a.durable = true;
  a.ack = true;
  ASSERT_TRUE(consumer->subscribe(a, [&](const ConsumedMessage& m) { auto_acked.push(m); }).ok());
  tyomq::SubscribeRequest mr = sub("p", "manual", "c");
  mr.durable = true;
  mr.manual_ack = true;
  ASSERT_TRUE(consumer->subscribe(mr, [&](const ConsumedMessage& m) { manual.push(m); }).ok());
  tyomq::SubscribeRequest d = sub("p", "doomed", "c");
  d.durable = true;
  d.manual_ack = true;
  d.ack_timeout = "200ms";
  d.retry = tyomq::RetryPolicy{2, "50ms", ""};
  ASSERT_TRUE(consumer->subscribe(d, [&](const ConsumedMessage& m) { dead.push(m); }).ok());
  ASSERT_TRUE(consumer->ping().get().ok());

  ASSERT_TRUE(producer->produce("p", "auto", "1").ok());
  ASSERT_TRUE(producer->produce("p", "manual", "2").ok());
  ASSERT_TRUE(producer->produce("p", "doomed", "3").ok());
  ASSERT_TRUE(auto_acked.wait_for(1));
  EXPECT_FALSE(auto_acked.items()[0].msg_id.empty());
  ASSERT_TRUE(manual.wait_for(1));
  auto id = manual.items()[0].msg_id;
  ASSERT_FALSE(id.empty());
  EXPECT_TRUE(consumer->ack_confirmed(id).get().ok());
  auto again = consumer->ack_confirmed(id).get();
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.error().code, 404);
  // Never acked: delivered twice (max_attempts 2), then dead-lettered.
  ASSERT_TRUE(dead.wait_for(2));
  EXPECT_EQ(dead.items()[1].delivery_attempt, 2);
  tyomq::Manager admin(*producer, kAdmin);
  std::vector<tyomq::DlqEntry> entries;
  ASSERT_TRUE(eventually([&] {
    auto list = admin.dlq_list("default").get();
    if (list.ok()) entries = *list;
    return entries.size() == 1;
  }));
  EXPECT_EQ(entries[0].event, "p-doomed");  // the subscription key
  EXPECT_NE(entries[0].message.find("\"message\":3"), std::string::npos) << entries[0].message;
  EXPECT_EQ(entries[0].consumer, "c");
  auto replayed = admin.dlq_replay(entries[0].id, "default").get();
  ASSERT_TRUE(replayed.ok()) << replayed.error().message;
  EXPECT_FALSE(replayed->empty());
  ASSERT_TRUE(dead.wait_for(3));  // the replay is delivered again
  EXPECT_EQ(dead.items()[2].message, "3");
  EXPECT_EQ(code_of(admin.dlq_discard("no-such-id", "default").get()), 404);
  // The auto-ACKed one is not delivered again.
  std::this_thread::sleep_for(400ms);
  EXPECT_EQ(auto_acked.size(), 1u);
}

TEST_F(TyoMqClient, AuthenticationTokensKeysAndErrors) {
  auto c = client();
  auto ok = c->authenticate("tok-r1").get();
  ASSERT_TRUE(ok.ok()) << ok.error().message;
  EXPECT_EQ(ok->realm, "r1");
  EXPECT_EQ(ok->role, "both");
  auto twice = c->authenticate("tok-r1").get();
  ASSERT_FALSE(twice.ok());
  EXPECT_EQ(twice.error().code, 403);

  auto bad = client();
  auto refused = bad->authenticate("nope").get();
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, 401);

  auto keyed = client();
  tyomq::AuthRequest key;
  key.realm = "r1";
  key.role = "consumer";
  key.key = "psk";
  auto k = keyed->authenticate(key).get();
  ASSERT_TRUE(k.ok()) << k.error().message;
  EXPECT_EQ(k->role, "consumer");

  Inbox<tyomq::ServerError> errors;
  auto gated = client();
  gated->on_error([&](const tyomq::ServerError& e) { errors.push(e); });
  tyomq::AuthRequest r1;
  r1.token = "tok-r1";
  ASSERT_TRUE(gated->authenticate(r1).get().ok());
  ASSERT_TRUE(gated->register_consumer("ANONYMOUS").ok());  // anonymous names are not allowed in r1
  ASSERT_TRUE(errors.wait_for(1));
  EXPECT_EQ(errors.items()[0].event, "ERROR");
  EXPECT_EQ(errors.items()[0].code, -4);
}

// A handler runs on the io thread holding the client's state; when the caller destroys the client
// meanwhile, the state goes with the handler, on the io thread. The destructor must still wait for
// that thread: a caller that returns from main at once raced the thread's exit (LeakSanitizer saw
// OpenSSL's per-thread error state of the CLI's io thread, CI).
TEST_F(TyoMqClient, DestroyingTheClientWaitsForItsIoThread) {
  auto c = client();
  std::promise<void> in_handler;
  std::atomic<bool> handler_done{false};
  std::atomic<bool> first{true};
  c->on_error([&](const tyomq::ServerError&) {
    if (!first.exchange(false)) return;
    in_handler.set_value();
    std::this_thread::sleep_for(300ms);
    handler_done = true;
  });
  ASSERT_TRUE(c->authenticate("tok-r1").get().ok());
  ASSERT_TRUE(c->register_consumer("ANONYMOUS").ok());  // ERROR -4 in r1
  ASSERT_EQ(in_handler.get_future().wait_for(5s), std::future_status::ready);
  c.reset();
  EXPECT_TRUE(handler_done);
}

TEST_F(TyoMqClient, EnrolmentRequestNextDecideAndTheDecision) {
  auto newcomer = client();
  Inbox<tyomq::AuthorizationDecision> decisions;
  newcomer->on_authorization_decided([&](const tyomq::AuthorizationDecision& d) { decisions.push(d); });
  tyomq::AuthorizationRequest req;
  req.realm = "r1";
  req.client_id = "dev-7";
  req.client_name = "sensor seven";
  req.client_token = "dev-7-token";
  req.role = "producer";
  auto submitted = newcomer->request_authorization(req).get();
  ASSERT_TRUE(submitted.ok()) << submitted.error().message;
  EXPECT_EQ(submitted->status, "pending");

  auto manager = client();
  auto next = manager->authorization_next("mk-r1", "r1").get();  // the realm's manager key signs
  ASSERT_TRUE(next.ok()) << next.error().message;
  ASSERT_TRUE(next->has_value());
  EXPECT_EQ((*next)->request_id, submitted->request_id);
  EXPECT_EQ((*next)->client_id, "dev-7");
  EXPECT_EQ((*next)->status, "pending");
  auto wrong = manager->authorization_next("not-the-key", "r1").get();
  ASSERT_FALSE(wrong.ok());
  EXPECT_EQ(wrong.error().code, 401);
  auto decided = manager->authorization_decide(kAdmin, submitted->request_id, true, "producer").get();
  ASSERT_TRUE(decided.ok()) << decided.error().message;
  EXPECT_EQ(decided->status, "approved");
  ASSERT_TRUE(decisions.wait_for(1));
  EXPECT_TRUE(decisions.items()[0].approved);
  EXPECT_EQ(decisions.items()[0].realm, "r1");
  // The client's own token now authenticates.
  auto later = client();
  auto ok = later->authenticate("dev-7-token").get();
  ASSERT_TRUE(ok.ok()) << ok.error().message;
  EXPECT_EQ(ok->realm, "r1");
  auto empty = manager->authorization_next(kAdmin, "r1").get();
  ASSERT_TRUE(empty.ok());
  EXPECT_FALSE(empty->has_value());
  EXPECT_EQ(code_of(manager->authorization_decide(kAdmin, "authreq-none", false).get()), 404);
}

TEST_F(TyoMqClient, EveryManagementCommand) {
  auto c = client();
  tyomq::Manager admin(*c, kAdmin);
  auto settings = admin.get_settings().get();
  ASSERT_TRUE(settings.ok()) << settings.error().message;
  EXPECT_NE(settings->find("\"r1\""), std::string::npos);

  tyomq::RealmConfig realm;
  realm.realm = "team-a";
  realm.manager_key = "mk-a";
  realm.key = "psk-a";
  realm.e2ee = "opportunistic";
  ASSERT_TRUE(admin.add_realm(realm).get().ok());
  EXPECT_EQ(code_of(admin.add_realm(realm).get()), 409);
  EXPECT_TRUE(admin.set_realm_auth("team-a", false).get().ok());
  EXPECT_TRUE(admin.set_realm_manager_key("team-a", std::string("mk-a2")).get().ok());
  EXPECT_TRUE(admin.set_realm_key("team-a", std::nullopt).get().ok());
  EXPECT_TRUE(admin.set_realm_acceptance("team-a", true).get().ok());
  EXPECT_TRUE(admin.set_realm_e2ee("team-a", "required").get().ok());
  EXPECT_TRUE(admin.set_realm_lifetime("team-a", true, "2h").get().ok());
  // A realm's manager key may sign its realm's own commands.
  tyomq::Manager realm_manager(*c, "mk-a2");
  auto scoped = realm_manager.set_realm_e2ee("team-a", "opportunistic").get();
  ASSERT_TRUE(scoped.ok()) << scoped.error().message;
  EXPECT_EQ(code_of(realm_manager.remove_realm("team-a").get()), 401);  // not a realm-scoped command
  auto renamed = admin.rename_realm("team-a", "team-b").get();
  ASSERT_TRUE(renamed.ok()) << renamed.error().message;
  auto missing = admin.rename_realm("team-a", "team-c").get();
  EXPECT_EQ(code_of(missing), 404) << (missing.ok() ? *missing : "");

  auto token = admin.add_management_token("mgmt-token-1", "tenant-", true, "1d").get();
  ASSERT_TRUE(token.ok()) << token.error().message;
  EXPECT_EQ(code_of(admin.add_management_token("mgmt-token-1", "tenant-").get()), 409);
  auto hash_at = token->find("\"token_hash\":\"");
  ASSERT_NE(hash_at, std::string::npos);
  std::string hash = token->substr(hash_at + 14, 64);
  EXPECT_TRUE(admin.revoke_management_token(hash).get().ok());
  EXPECT_EQ(code_of(admin.revoke_management_token(hash).get()), 404);

  tyomq::ExternalAuth ext;
  ext.auth_url = "http://127.0.0.1:9/validate";
  ext.realm = "team-b";
  ext.auth_secret = "s";
  EXPECT_TRUE(admin.set_external_auth(ext).get().ok());
  ext.auth_url = "javascript:alert(1)";
  EXPECT_EQ(code_of(admin.set_external_auth(ext).get()), 400);

  tyomq::RevokeToken revoke;
  revoke.realm = "r1";
  revoke.client_id = "c1";
  auto revoked = admin.revoke_token(revoke).get();
  ASSERT_TRUE(revoked.ok()) << revoked.error().message;
  EXPECT_NE(revoked->find("\"revoked\""), std::string::npos);
  EXPECT_EQ(code_of(client()->authenticate("tok-r1").get()), 401);

  auto stats = admin.stats().get();
  ASSERT_TRUE(stats.ok());
  EXPECT_NE(stats->find("\"stats\""), std::string::npos);
  EXPECT_TRUE(admin.reload_settings().get().ok());
  EXPECT_TRUE(admin.remove_realm("team-b").get().ok());
  tyomq::PersistenceConfig bad_store;
  bad_store.storage = "cassandra";
  EXPECT_EQ(code_of(admin.set_persistence(bad_store).get()), 400);
  auto raw = admin.command(R"({"command":"no_such_command"})").get();
  EXPECT_EQ(raw.error().code, 400);
  EXPECT_TRUE(admin.set_global_auth(false).get().ok());
  auto open = client()->authenticate(tyomq::AuthRequest{}).get();  // auth off: anyone is in
  ASSERT_TRUE(open.ok()) << open.error().message;
  EXPECT_EQ(open->realm, "default");
}

TEST_F(TyoMqClient, PresenceTicketsAndTheKeyDirectory) {
  Inbox<tyomq::Presence> seen;
  auto producer = client();
  producer->on_presence([&](const tyomq::Presence& p) { seen.push(p); });
  ASSERT_TRUE(producer->register_producer("sensor").ok());
  ASSERT_TRUE(producer->ping().get().ok());
  auto consumer = client();
  ASSERT_TRUE(consumer->register_consumer("dash").ok());
  ASSERT_TRUE(consumer->subscribe(sub("sensor", "temp", "dash"), [](const ConsumedMessage&) {}).ok());
  ASSERT_TRUE(seen.wait_for(1));
  auto p = seen.items()[0];
  EXPECT_EQ(p.kind, "SUBSCRIBE-TO");
  EXPECT_EQ(p.to, "sensor");
  EXPECT_EQ(p.name, "dash");
  ASSERT_EQ(p.events.size(), 1u);
  EXPECT_EQ(p.events[0], "sensor-temp");
  consumer.reset();
  ASSERT_TRUE(eventually([&] {
    for (auto& e : seen.items())
      if (e.kind == "DISCONNECT" && e.consumer == "dash") return true;
    return false;
  }));

  auto ticket = producer->remote_ticket("agent", "session-1").get();
  ASSERT_TRUE(ticket.ok()) << ticket.error().message;
  EXPECT_EQ(ticket->ticket.size(), 32u);
  EXPECT_EQ(ticket->session_id, "session-1");
  EXPECT_EQ(code_of(producer->remote_ticket("king").get()), 400);

  ASSERT_TRUE(producer->publish_key("sensor", "BASE64KEY", "k1", "ecdh-p256").get().ok());
  auto keys = consumer ? consumer->lookup_keys("sensor").get() : client()->lookup_keys("sensor").get();
  ASSERT_TRUE(keys.ok()) << keys.error().message;
  ASSERT_EQ(keys->size(), 1u);
  EXPECT_EQ((*keys)[0].key_id, "k1");
  EXPECT_EQ((*keys)[0].public_key, "BASE64KEY");
  EXPECT_FALSE(producer->publish_key("not-mine", "K").get().ok());  // a name registered elsewhere
}

TEST_F(TyoMqClient, CustomNamespaceEngineIoV3AndLongPolling) {
  auto agent = client();
  auto ticket = agent->remote_ticket("agent", "s9").get();
  ASSERT_TRUE(ticket.ok());
  Client remote(options(), "/remote");
  ASSERT_TRUE(remote.connect().get().ok());
  Inbox<Reply> ok;
  remote.connection().on("/remote", "auth_ok", [&](const Reply& r) { ok.push(r); });
  ASSERT_TRUE(remote.connection().emit("/remote", "auth", R"({"ticket":")" + ticket->ticket + R"(","session_id":"s9","role":"agent"})").ok());
  ASSERT_TRUE(ok.wait_for(1));
  EXPECT_NE(ok.items()[0].json.find("\"agent\""), std::string::npos);

  Options v3 = options();
  v3.eio = 3;
  Inbox<ConsumedMessage> got;
  auto old_consumer = client(v3);
  ASSERT_TRUE(old_consumer->register_consumer("v3c").ok());
  ASSERT_TRUE(old_consumer->subscribe(sub("p3", "e", "v3c"), [&](const ConsumedMessage& m) { got.push(m); }).ok());
  ASSERT_TRUE(old_consumer->ping().get().ok());
  auto old_producer = client(v3);
  ASSERT_TRUE(old_producer->produce("p3", "e", "\"v3\"").ok());
  ASSERT_TRUE(got.wait_for(1));
  EXPECT_EQ(got.items()[0].message, "\"v3\"");
  // Long-polling on v3 too (its payload framing is another than v4's), with a binary attachment.
  v3.transport = Transport::polling;
  auto polled = client(v3);
  tyomq::ProduceRequest bin;
  bin.from = "p3";
  bin.event = "e";
  bin.message = siomq::attachment_placeholder(0);
  bin.attachments = {std::string("\x01\x02\x00", 3)};
  auto confirmed = polled->produce_confirmed(bin).get();
  ASSERT_TRUE(confirmed.ok()) << confirmed.error().message;
  ASSERT_TRUE(got.wait_for(2));
  ASSERT_EQ(got.items()[1].attachments.size(), 1u);
  EXPECT_EQ(got.items()[1].attachments[0], std::string("\x01\x02\x00", 3));
}

// https:// and wss:// URLs: the server's certificate checked against the given CA with the host name
// (SNI sent); the system's roots do not know a self-signed one; a certificate for another name fails.
TEST(TyoMqTls, VerifiesTheServerCertificateAndItsName) {
  char tmpl[] = "/tmp/siomq-client-tls.XXXXXX";
  std::string dir = mkdtemp(tmpl);
  auto make_cert = [&](const std::string& name, const std::string& san) {
    std::string cmd = "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout " + dir + "/" +
                      name + ".key -out " + dir + "/" + name + ".crt -days 2 -subj /CN=" + name +
                      " -addext subjectAltName=" + san + " >/dev/null 2>&1";
    return std::system(cmd.c_str()) == 0;
  };
  ASSERT_TRUE(make_cert("good", "DNS:localhost,IP:127.0.0.1"));
  ASSERT_TRUE(make_cert("other", "DNS:other.test"));
  for (const char* which : {"good", "other"}) {
    ServerProcess::Config c;
    c.settings_json = std::string(R"({"tls":{"cert":")") + dir + "/" + which + R"(.crt","key":")" + dir + "/" + which + R"(.key"}})";
    ServerProcess server(c);
    std::string error;
    ASSERT_TRUE(server.start(&error)) << error;
    Options o;
    o.urls = {"https://localhost:" + std::to_string(server.port())};
    o.ca_file = dir + "/" + which + ".crt";
    o.reconnect.enabled = false;
    Client tls(o);
    auto st = tls.connect().get();
    if (std::string(which) == "good") {
      ASSERT_TRUE(st.ok()) << st.error().message;
      ASSERT_TRUE(tls.ping().get().ok());
      Options wss = o;
      wss.urls = {"wss://127.0.0.1:" + std::to_string(server.port())};
      Client by_ip(wss);
      EXPECT_TRUE(by_ip.connect().get().ok());
      Options system_roots = o;
      system_roots.ca_file.clear();
      Client untrusted(system_roots);
      auto refused = untrusted.connect().get();
      ASSERT_FALSE(refused.ok());
      EXPECT_NE(refused.error().message.find("tls handshake"), std::string::npos) << refused.error().message;
    } else {
      ASSERT_FALSE(st.ok());  // a valid certificate, for another name
      EXPECT_NE(st.error().message.find("tls handshake"), std::string::npos) << st.error().message;
    }
    EXPECT_EQ(server.sanitizer_report(), "");
  }
  std::filesystem::remove_all(dir);
}

// A durable, ACK-mode consumer across a kill -9 of the server: it comes back by itself (authenticated,
// registered, subscribed), and every confirmed message arrives exactly once.
TEST_F(TyoMqClient, ServerRestartKeepsDurableSubscriptionsWithoutLossOrDuplicates) {
  Inbox<ConsumedMessage> got;
  Inbox<State> states;
  std::atomic<int> epoch{0};  // connections so far: a redelivery is legitimate only across one
  Inbox<std::pair<std::string, int>> arrivals;
  auto consumer = client();
  consumer->connection().on_state([&](State s, const std::string&) {
    states.push(s);
    if (s == State::reconnecting) ++epoch;
  });
  ASSERT_TRUE(consumer->authenticate("tok-r1").get().ok());
  ASSERT_TRUE(consumer->register_consumer("keeper").ok());
  tyomq::SubscribeRequest r = sub("feed", "tick", "keeper");
  r.durable = true;
  r.ack = true;
  ASSERT_TRUE(consumer->subscribe(r, [&](const ConsumedMessage& m) {
    arrivals.push({m.message, epoch.load()});
    got.push(m);
  }).ok());
  ASSERT_TRUE(consumer->ping().get().ok());

  Options po = options();
  auto producer = client(po);
  ASSERT_TRUE(producer->authenticate("tok-r1").get().ok());
  auto produce = [&](int from, int to) {
    for (int i = from; i < to; ++i) {
      tyomq::ProduceRequest m;
      m.from = "feed";
      m.event = "tick";
      m.message = std::to_string(i);
      auto st = producer->produce_confirmed(m).get();
      ASSERT_TRUE(st.ok()) << i << ": " << st.error().message;
    }
  };
  produce(0, 20);
  ASSERT_TRUE(got.wait_for(20));

  server_->kill9();
  std::string error;
  ASSERT_TRUE(server_->start(&error)) << error;  // same port, same data
  auto t0 = std::chrono::steady_clock::now();
  ASSERT_TRUE(eventually([&] { return consumer->connected() && producer->connected(); }));
  auto reconnect_ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0).count();
  std::printf("reconnected %lld ms after the server listened again\n", static_cast<long long>(reconnect_ms));
  produce(20, 40);
  // While the consumer is away: stored, then replayed when it comes back.
  (void)consumer->connection().emit("/", "QUIT", siomq::json_string(consumer->connection().socket_id()));
  produce(40, 60);
  ASSERT_TRUE(got.wait_for(60, 20s)) << got.size();
  std::this_thread::sleep_for(500ms);
  // Nothing lost. A delivery whose auto-ACK had not reached the store when the connection went (the
  // kill, the QUIT) comes again on the next connection — at least once, from the server; within one
  // connection nothing arrives twice (the client never hands a delivery over twice).
  std::multiset<std::string> values;
  std::set<std::pair<std::string, int>> per_connection;
  for (auto& [message, conn] : arrivals.items()) {
    values.insert(message);
    EXPECT_TRUE(per_connection.emplace(message, conn).second) << message << " twice on connection " << conn;
  }
  size_t again = 0;
  for (int i = 0; i < 60; ++i) {
    EXPECT_GE(values.count(std::to_string(i)), 1u) << i;
    again += values.count(std::to_string(i)) - 1;
  }
  std::printf("%zu of 60 delivered again after the kill and the QUIT\n", again);
  auto seen = states.items();
  EXPECT_GE(std::count(seen.begin(), seen.end(), State::reconnecting), 2);
}

}  // namespace
}  // namespace siomq::test
