// What the tyo-mq surface's translation units share (internal to src/surfaces): the per-socket state
// (SocketEndpoint), the registry of live sockets by realm and address, the context every handler
// reaches, and the small encoders for events, ack answers and errors.
#pragma once

#include <nlohmann/json.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "auth/authentication.h"
#include "auth/enrolment.h"
#include "auth/limits.h"
#include "auth/live_settings.h"
#include "auth/manager_proof.h"
#include "broker/broker.h"
#include "net/out_frame.h"
#include "net/socket.h"
#include "surfaces/tyo_mq/produce_chunks.h"
#include "surfaces/tyo_mq/surface.h"

namespace siomq::net {
class Worker;
struct Namespace;
}

namespace siomq::surfaces {

using FramesPtr = std::shared_ptr<const std::vector<net::OutFrame>>;

// A socket on namespace "/" as the broker and the auth rules see it. `send` and `close` may be called
// from any thread; every other member is touched only on the socket's own worker.
class SocketEndpoint : public broker::Endpoint, public std::enable_shared_from_this<SocketEndpoint> {
 public:
  explicit SocketEndpoint(net::Socket& socket);
  ~SocketEndpoint() override;
  const std::string& socket_id() const override { return id_; }
  net::Worker& worker() { return worker_; }

  // Sends on the socket's worker: directly when called there, else through the outbox.
  void send(FramesPtr frames);
  // From any thread: `done` runs on the worker once everything sent through this endpoint before the
  // call has reached the transport (net::Socket::when_sent), or with false when the socket is gone.
  void when_sent(net::SentReceipt done);
  // Disconnects the socket (the whole connection), from any thread.
  void close();

  // §2's tyoAuth and _pendingRealm. The socket's realm is the grant's, else "default".
  std::optional<auth::Grant> grant;
  std::optional<std::string> pending_realm;
  bool authenticating = false;  // an external validator is being asked
  const std::string& realm() const;

  // Every realm this socket registered or subscribed in: a disconnect takes it offline in each.
  std::set<std::string> realms;
  // Limits (§11.1): the rate buckets, the names and subscriptions this socket made, the last RATE_LIMITED.
  auth::TokenBucket messages, bytes, credentials;
  std::set<std::pair<std::string, std::string>> registrations;  // (realm, name)
  std::set<std::pair<std::string, std::string>> subscriptions;  // (realm, key + consumer)
  int64_t rate_limited_at_ms = 0;
  std::string ip;  // the address limits count (X-Forwarded-For's first hop when trust_proxy)

  // PRODUCE_CHUNK transfers in progress; dropped with the socket, or by a timer once idle.
  ChunkAssembler chunks;
  bool watching_chunks = false;  // that timer is armed

 private:
  void drain_outbox();

  net::Worker& worker_;
  std::weak_ptr<net::Socket> socket_;
  std::string id_;
  // Frames sent from other threads (the durable queues): one post to the worker takes all of them.
  // A receipt rides in the same queue, so it is asked for after the frames sent before it.
  struct Outgoing {
    FramesPtr frames;
    net::SentReceipt receipt;
  };
  void post_outgoing(Outgoing item);
  std::mutex outbox_mu_;
  std::vector<Outgoing> outbox_;
};

std::shared_ptr<SocketEndpoint> endpoint_of(net::Socket& socket);

// Every live socket on "/", with the realm it is in now and its address: what remove_realm disconnects
// and what the per-IP connection limits count. Thread-safe.
class SocketRegistry {
 public:
  // Adds a socket; returns how many sockets its address has now and how many it opened in the last minute.
  std::pair<size_t, size_t> add(const std::shared_ptr<SocketEndpoint>& e, const std::string& ip, int64_t now_ms);
  void set_realm(const SocketEndpoint* e, const std::string& realm);
  void remove(const SocketEndpoint* e);
  // The sockets whose realm is `realm` now.
  std::vector<std::shared_ptr<SocketEndpoint>> in_realm(const std::string& realm);
  size_t size();

 private:
  struct Entry {
    std::weak_ptr<SocketEndpoint> endpoint;
    std::string realm;
    std::string ip;
  };
  std::mutex mu_;
  std::unordered_map<const SocketEndpoint*, Entry> sockets_;
  std::unordered_map<std::string, size_t> per_ip_;
  std::unordered_map<std::string, std::vector<int64_t>> opened_;  // per ip, the last minute's connection times
  uint64_t adds_ = 0;
};

// What every handler reaches.
struct Context {
  Context(broker::Broker& b, broker::DurableQueues& q, auth::LiveSettings& s, TyoMqOptions o)
      : broker(b), queues(q), settings(s), options(std::move(o)) {
    set_default_ttl(options.default_ttl_ms);
  }
  // The store's default TTL (§5.5), changed by set_persistence while handlers read it.
  std::optional<int64_t> default_ttl() const {
    int64_t v = default_ttl_ms.load(std::memory_order_relaxed);
    return v < 0 ? std::nullopt : std::optional<int64_t>(v);
  }
  void set_default_ttl(std::optional<int64_t> ttl) { default_ttl_ms.store(ttl ? *ttl : -1, std::memory_order_relaxed); }

  broker::Broker& broker;
  broker::DurableQueues& queues;
  auth::LiveSettings& settings;
  TyoMqOptions options;
  auth::NonceCache nonces;
  auth::Enrolment enrolment;
  SocketRegistry sockets;
  std::atomic<int64_t> default_ttl_ms{-1};  // -1: never
  std::atomic<bool> moving_store{false};
  std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();
  // housekeeping()'s clocks (steady ms), touched by its one caller only.
  int64_t last_ephemeral_sweep_ms = 0, last_idle_sweep_ms = 0;
};

// Frames sendable from any thread: an event, an ack answer.
FramesPtr event_frames(std::string_view event, std::string_view payload, std::vector<std::string> attachments = {});
FramesPtr ack_frames(uint64_t ack_id, std::string_view json_array);
// {message, code}: ERROR's payload.
std::string error_object(int code, std::string_view message);
// {ok:false, code, message}: the failure answer to an ack callback.
std::string error_reply(int code, std::string_view message);

// The §6.3 gate for `event` with `roles`; a refusal sends AUTH_FAIL {code, message} and answers the ack
// callback (§0 row 8). An implicit grant is kept on the socket.
bool admit(Context& ctx, const auth::Snapshot& snap, net::Socket& socket, SocketEndpoint& endpoint,
           const net::Message& msg, std::string_view event, std::initializer_list<std::string_view> roles);
// Whether a grant into `realm` would bring a realm into being past `limits.max_realms`: a realm that is
// configured, or that exists already, is always admitted.
bool over_realm_cap(Context& ctx, const auth::Snapshot& snap, const std::string& realm);
// The refusal that goes with it (AUTH_FAIL 429).
inline constexpr std::string_view kTooManyRealms = "Too many realms on this server (limits.max_realms)";
// Gives the socket `grant` (AUTHENTICATION or the gate) and files it under the grant's realm.
void set_grant(Context& ctx, SocketEndpoint& endpoint, auth::Grant grant);

// §11.1: RATE_LIMITED {code:429, reason, retry_after} at most once a second per socket.
void rate_limited(net::Socket& socket, SocketEndpoint& endpoint, std::string_view reason, int64_t retry_after_s);
// Paces an event that carries a credential (a token, a key, a proof) by the socket's credential bucket;
// on refusal RATE_LIMITED and {ok:false, code:429} to the ack callback.
bool within_credential_rate(Context& ctx, net::Socket& socket, const net::Message& msg);

// The {body, proof} payload of §7's and §8's signed events: body parsed (an object; {} when absent)
// and as sent, for the proof. An error (400) when the payload is not an object or body is not one.
struct SignedRequest {
  nlohmann::json body;
  std::string body_raw;
  std::string proof_raw;
};
Result<SignedRequest> signed_request(const net::Message& msg);
// Who signed (§8.1): any admin token, else `realm_key` when it is given and not empty. 401 otherwise,
// with the proof's own message (missing, invalid, nonce already used).
enum class Signer { admin, realm };
Result<Signer> verify_signer(Context& ctx, const auth::Snapshot& snap, std::string_view action, const SignedRequest& req,
                             const std::string* realm_key);
// The answer of a signed event: to the ack callback when there is one, else as `event`.
void answer(net::Socket& socket, const net::Message& msg, std::string_view event, const nlohmann::json& payload);
// The same from another thread (an asynchronous command finishing on the durable queues' or the main thread).
void answer_later(const std::shared_ptr<SocketEndpoint>& to, std::optional<uint64_t> ack_id, std::string_view event,
                  const nlohmann::json& payload);
// {ok:false, code, message} of an error (a code of 0 is a 500).
nlohmann::json failure(const Error& e);
// AUTH_FAIL {code, message}, and {ok:false, code, message} to the ack callback if there is one (§0 row 8).
void auth_fail(net::Socket& socket, const net::Message& msg, int code, std::string_view message);

// The handlers of the other translation units.
// AUTHENTICATION and the enrolment flow (§6.2, §7).
void register_auth_handlers(const std::shared_ptr<Context>& ctx, net::Namespace& ns);
// AUTH_MANAGEMENT_COMMAND (§8).
void register_management_handlers(const std::shared_ptr<Context>& ctx, net::Namespace& ns);

// Expired ephemeral realms (at the first call, then every second) and idle eviction (§11.2).
void housekeeping(Context& ctx);

// A realm goes away (remove_realm, an expired ephemeral realm): its settings and tokens (written to the
// settings file), its live state, its sockets (disconnected), its pending enrolments, and its stored
// rows, DLQ entries and durable subscriptions. 404 when nothing of it exists.
struct Disposal {
  size_t removed_tokens = 0;
  size_t disconnected_sockets = 0;
};
// `stored` is called (on the queues' thread) once the deletion of its stored rows is written.
Result<Disposal> dispose_realm(Context& ctx, const std::string& realm,
                               std::function<void(const Status&, const Disposal&)> stored = {});

}  // namespace siomq::surfaces
