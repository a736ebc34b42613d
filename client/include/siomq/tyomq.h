// siomq::tyomq: the client of the tyo-mq protocol (namespace "/", or a custom one) — every call of the
// tyo-mq Go client (connect, authenticate, register as producer/consumer, produce, subscribe with every
// option, ACK, enrolment, signed manager proofs, custom namespaces) and what it leaves to its users:
// reconnection, publisher confirms, chunked messages both ways, presence, errors, PING, remote tickets
// and the E2EE key directory. Manager commands (§8.2) are in siomq/tyomq_manage.h.
//
// Reconnection: on by default (Options::reconnect). After a reconnect the Client, before anything that
// waited is sent: authenticates again with what authenticate() last succeeded with (and waits for
// AUTH_OK), registers again every producer and consumer name, and sends every SUBSCRIBE again — which is
// what makes the server replay a durable subscription's backlog. The client itself never sends a
// message twice: a confirm that was pending when the connection dropped fails with errc::disconnected
// (the message may or may not have been stored).
//
// Messages are JSON text: `message` is any JSON value as text (use siomq::json_string for a string).
//
// Threading: every call is thread-safe; handlers and callbacks run on the io thread, one at a time (see
// siomq/connection.h). Do not wait on a future inside a handler.
// Ownership: a Client owns its Connection and io thread; destroying it closes the connection, and no
// handler runs after the destructor returns.
#pragma once

#include <cstdint>
#include <functional>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "siomq/connection.h"
#include "siomq/result.h"

namespace siomq::tyomq {

inline constexpr int kDefaultPort = 17352;
inline constexpr std::string_view kAllProducers = "TYO-MQ-ALL";  // subscribe to an event from any producer
inline constexpr std::string_view kEventAll = "TM-ALL";          // every event of one producer (scope "all")
// Messages whose PRODUCE text is longer (in UTF-16 units, as the JavaScript clients count) go in pieces.
inline constexpr size_t kChunkThreshold = 262144;

// The event a delivery arrives on: "CONSUME-<lower(producer-event)>", or with scope "all"
// "CONSUME-<lower(producer)>-TM-ALL".
std::string consume_event_name(std::string_view producer, std::string_view event, std::string_view scope = {});

struct RetryPolicy {
  int max_attempts = 0;   // 0: the server's default
  std::string delay;      // "5s", "200ms"
  std::string backoff;    // "" | "exponential"
};

struct SubscribeRequest {
  std::string event;      // an MQTT-style pattern in topic mode ("orders/+/status", "factory/#")
  std::string producer;   // default: kAllProducers in topic mode
  std::string consumer;   // the consumer name (default: the last register_consumer name)
  std::string scope;      // "" | "all"
  bool durable = false;   // queue while offline
  bool ack = false;       // ACK mode: redelivered until acknowledged (auto-ACK after the handler)
  bool manual_ack = false;  // ACK mode, but the handler calls ack(msg_id) itself
  std::string ack_timeout;  // "30s"
  std::optional<RetryPolicy> retry;
  std::string mode;       // "" | "topic"
  std::string group;      // consumer group: one delivery per group
  std::string consumer_id;  // durable queue key (default: the consumer name)
};

struct ProduceRequest {
  std::string event;
  std::string message = "null";  // JSON text
  std::string from;              // producer name (default: the last register_producer name)
  bool guaranteed = false;       // stored for offline subscribers even when not durable
  std::optional<int64_t> ttl_seconds;
  bool broadcast = false;        // method "broadcast"
  std::string broadcast_scope;   // "realm" | "group"
  std::string group;
  std::string to;                // E2EE metadata, copied to deliveries
  std::string enc_json;          // E2EE envelope {v, alg, epk, iv, kid}, JSON text
  std::string id;                // a delivery id (SSE)
  // Binary data the message refers to by siomq::attachment_placeholder(i). Never chunked.
  std::vector<std::string> attachments;
};

struct ConsumedMessage {
  std::string event;     // as produced (the concrete topic in topic mode)
  std::string message;   // JSON text
  std::string from;
  std::string msg_id;    // ACK mode only: ack(msg_id)
  int64_t delivery_attempt = 0;
  std::string to, enc_json, content_type;
  std::string raw;       // the whole delivery object
  std::vector<std::string> attachments;
};

// The server's unprompted errors: ERROR (codes -1 bad name, -3 duplicate consumer, -4 anonymous not
// allowed, -6 E2EE required; 0 for the bare-string ones), AUTH_FAIL (401/403), RATE_LIMITED (429),
// ACK_FAIL, AUTH_MANAGEMENT_FAIL. `event` names which.
struct ServerError {
  std::string event;
  int code = 0;
  std::string message;
  std::string raw;
};

// SUBSCRIBE-TO-, CONNECT- and DISCONNECT- events about a registered producer or consumer.
struct Presence {
  std::string kind;      // "SUBSCRIBE-TO" | "CONNECT" | "DISCONNECT"
  std::string to;        // the producer or consumer id (= name) it was addressed to
  std::string socket;    // the peer's socket id
  std::string producer, consumer;  // the peer's name (one of them)
  std::string name;      // SUBSCRIBE-TO: the subscribing consumer
  std::vector<std::string> events;  // SUBSCRIBE-TO: subscription keys
  bool online = false;
  std::string raw;
};

struct AuthRequest {
  std::string token;  // a static token, a JWT, or one an external validator accepts
  std::string realm;
  std::string role;   // producer | consumer | both (without a token)
  std::string key;    // the realm's pre-shared key (without a token)
};

struct AuthResult {
  std::string realm, role;
};

// Enrolment (§7).
struct AuthorizationRequest {
  std::string realm, role, client_id, client_name, client_token;
  std::string challenge_response_json;  // optional, JSON text
};
struct AuthorizationSubmitted {
  std::string request_id, status;
};
struct PendingAuthRequest {
  std::string request_id, status, realm, role, client_id, client_name, client_token_hash, created_at;
  std::string decided_at, decision_reason;
  std::string raw;
};
struct AuthorizationDecision {  // AUTHORIZATION_APPROVED / _REJECTED, to the requester
  bool approved = false;
  std::string request_id, realm, role, reason;
};

struct RemoteTicket {
  std::string session_id, ticket, role;
  int64_t expires_in = 0;
};

struct PublicKey {
  std::string key_id, alg, public_key, updated_at;
};

// §8.1: the proof a manager command, AUTHORIZATION_NEXT or AUTHORIZATION_DECIDE carries:
// HMAC-SHA256(secret, action \n timestamp \n nonce \n canonical(body)), a fresh 16-byte nonce, now.
struct AdminProof {
  int64_t timestamp = 0;
  std::string nonce;
  std::string signature;
  std::string json() const;  // {"timestamp":…,"nonce":"…","signature":"…"}
};
// errc::bad_request when `body_json` is not JSON.
Result<AdminProof> create_admin_proof(std::string_view secret, std::string_view action, std::string_view body_json);

template <class T>
using Callback = std::function<void(Result<T>)>;

class Client {
 public:
  explicit Client(Options options = {}, std::string nsp = "/");
  Client(Options options, boost::asio::io_context& io, std::string nsp = "/");
  ~Client();
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  std::future<Status> connect();
  void connect(std::function<void(Status)> done);
  void close();
  bool connected() const;
  const std::string& nsp() const;
  Connection& connection();  // anything else: connection().emit / request / on on nsp()

  // AUTHENTICATION, answered by AUTH_OK or AUTH_FAIL (401/403). Repeated after each reconnect once it
  // succeeded.
  std::future<Result<AuthResult>> authenticate(std::string token);
  std::future<Result<AuthResult>> authenticate(AuthRequest request);
  void authenticate(AuthRequest request, Callback<AuthResult> done);

  // PRODUCER / CONSUMER (the id sent is the name, so presence events keep their names across
  // reconnects). Registered again after each reconnect.
  Status register_producer(std::string name);
  Status register_consumer(std::string name);

  // PRODUCE, fire-and-forget (tyo-mq has no positive answer). Chunked above kChunkThreshold.
  Status produce(std::string_view from, std::string_view event, std::string_view message_json);
  Status produce(const ProduceRequest& request);
  // PRODUCE with a publisher confirm: the number of copies stored (0 for live-only or broadcast) once
  // they are durable; the server's refusal (e.g. 503 while the store is behind) otherwise.
  std::future<Result<uint64_t>> produce_confirmed(const ProduceRequest& request);
  void produce_confirmed(const ProduceRequest& request, Callback<uint64_t> done);

  // SUBSCRIBE, and `handler` for its deliveries (chunked ones reassembled). With ack and not
  // manual_ack, each delivery is ACKed after the handler returns. Sent again after each reconnect.
  Status subscribe(SubscribeRequest request, std::function<void(const ConsumedMessage&)> handler);
  // UNSUBSCRIBE of that subscription (its durable queue goes too); its handler is dropped.
  Status unsubscribe(std::string_view producer, std::string_view event, std::string_view consumer = {});
  // ACK of one delivery; the confirmed form waits for ACK_OK / ACK_FAIL (404 when no longer pending).
  Status ack(std::string_view msg_id);
  std::future<Status> ack_confirmed(std::string_view msg_id);

  void on_presence(std::function<void(const Presence&)> handler);
  void on_error(std::function<void(const ServerError&)> handler);

  // PING: the server's answer (a JSON string holding {...payload, pong, timestamp}).
  std::future<Result<std::string>> ping(std::string_view payload_json = "{}");

  // ---- enrolment (§7) ----
  std::future<Result<AuthorizationSubmitted>> request_authorization(const AuthorizationRequest& request);
  void request_authorization(const AuthorizationRequest& request, Callback<AuthorizationSubmitted> done);
  // The decision on this socket's request (AUTHORIZATION_APPROVED / _REJECTED).
  void on_authorization_decided(std::function<void(const AuthorizationDecision&)> handler);
  // Manager side, signed with an admin token or the realm's manager key: the oldest pending request
  // (nullopt when none), and a decision.
  std::future<Result<std::optional<PendingAuthRequest>>> authorization_next(std::string_view secret, std::string_view realm = {});
  std::future<Result<PendingAuthRequest>> authorization_decide(std::string_view secret, std::string_view request_id,
                                                               bool approved, std::string_view role = {},
                                                               std::string_view reason = {});

  // ---- other features ----
  // A single-use ticket for the /remote namespace (role "agent" or "viewer").
  std::future<Result<RemoteTicket>> remote_ticket(std::string_view role, std::string_view session_id = {},
                                                  std::string_view machine_id = {});
  // The E2EE public-key directory: publish a key for a name registered on this connection; look one up.
  std::future<Status> publish_key(std::string_view identity, std::string_view public_key,
                                  std::string_view key_id = "default", std::string_view alg = {});
  std::future<Result<std::vector<PublicKey>>> lookup_keys(std::string_view identity);

  // A signed command (§8.1) of any action, answered through the ack: the answer object as JSON text
  // ({ok:false,…} becomes an Error). What siomq/tyomq_manage.h's calls are built on.
  void signed_request(std::string_view event, std::string_view action, std::string_view secret,
                      std::string_view body_json, Callback<std::string> done);

 private:
  class Impl;
  std::shared_ptr<Impl> impl_;
};

}  // namespace siomq::tyomq
