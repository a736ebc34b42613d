// siomq::tyomq::Client (siomq/tyomq.h): tyo-mq events written from typed requests, deliveries (chunked
// or not) read into ConsumedMessage, and what a reconnect must say again: AUTHENTICATION, PRODUCER,
// CONSUMER and every SUBSCRIBE, in that order, before anything that waited.
#include "siomq/tyomq.h"

#include <chrono>
#include <deque>
#include <map>
#include <mutex>
#include <set>
#include <unordered_map>

#include "auth/hmac.h"
#include "future_call.h"
#include "json_text.h"
#include "tyomq_wire.h"

namespace siomq::tyomq {
namespace {

using simdjson::dom::element;
using namespace wire;

constexpr size_t kMaxIncomingTransfers = 16;
constexpr size_t kMaxIncomingPieces = 4096;

}  // namespace

class Client::Impl : public std::enable_shared_from_this<Client::Impl> {
 public:
  Impl(Options options, boost::asio::io_context* io, std::string nsp)
      : nsp_(std::move(nsp)),
        max_transfer_bytes_(options.max_message_bytes),
        conn_(io ? std::make_unique<Connection>(options, *io) : std::make_unique<Connection>(options)) {}

  void start() {
    conn_->join(nsp_, {}, {});
    std::weak_ptr<Impl> weak = weak_from_this();
    auto on = [&](const char* event, void (Impl::*fn)(const Reply&)) {
      conn_->on(nsp_, event, [weak, fn](const Reply& r) {
        if (auto self = weak.lock()) ((*self).*fn)(r);
      });
    };
    on("AUTH_OK", &Impl::on_auth_ok);
    on("AUTH_FAIL", &Impl::on_auth_fail);
    on("CONSUME_CHUNK", &Impl::on_chunk);
    on("AUTHORIZATION_APPROVED", &Impl::on_approved);
    on("AUTHORIZATION_REJECTED", &Impl::on_rejected);
    for (const char* event : {"ERROR", "RATE_LIMITED", "ACK_FAIL", "AUTH_MANAGEMENT_FAIL", "AUTHORIZATION_FAIL"}) {
      conn_->on(nsp_, event, [weak, event](const Reply& r) {
        if (auto self = weak.lock()) self->report(error_of(event, r));
      });
    }
    conn_->on_rejoin(nsp_, [weak](std::shared_ptr<RejoinSender> sender) {
      if (auto self = weak.lock()) self->rejoin(std::move(sender));
      else sender->done();
    });
    conn_->on_state([weak](State s, const std::string&) {
      auto self = weak.lock();
      if (!self || s == State::connected) return;
      // What was waiting on the old connection cannot be answered on the new one.
      self->transfers_.clear();
      self->fail_auth_waiters(Error{errc::disconnected, "the connection dropped before the answer"});
    });
  }

  // ---- authentication ----

  void authenticate(AuthRequest req, Callback<AuthResult> done) {
    std::weak_ptr<Impl> weak = weak_from_this();
    conn_->post([weak, req = std::move(req), done = std::move(done)]() mutable {
      auto self = weak.lock();
      if (!self) return done(Error{errc::closed, "the client is gone"});
      if (self->conn_->state() != State::connected)
        return done(Error{errc::disconnected, "not connected: authenticate once connected"});
      {
        std::lock_guard lock(self->mu_);
        self->auth_waiters_.push_back(AuthWaiter{req, std::move(done)});
      }
      (void)self->conn_->emit(self->nsp_, "AUTHENTICATION", auth_json(req));
    });
  }

  static std::string auth_json(const AuthRequest& r) {
    json::Object o;
    o.str_if("token", r.token).str_if("realm", r.realm).str_if("role", r.role).str_if("key", r.key);
    return o.done();
  }

  // ---- registration ----

  Status register_name(bool producer, std::string name) {
    {
      std::lock_guard lock(mu_);
      auto& names = producer ? producers_ : consumers_;
      if (std::find(names.begin(), names.end(), name) == names.end()) {
        names.push_back(name);
        listen_presence(name);
      }
      if (!producer) last_consumer_ = name;
      else last_producer_ = name;
    }
    return conn_->emit(nsp_, producer ? "PRODUCER" : "CONSUMER", registration_json(producer, name));
  }

  static std::string registration_json(bool producer, const std::string& name) {
    json::Object o;
    o.str("name", name).str("id", name);
    if (!producer) o.str("consumer_id", name);
    return o.done();
  }

  // ---- produce ----

  std::string default_from(const ProduceRequest& r) {
    if (!r.from.empty()) return r.from;
    std::lock_guard lock(mu_);
    return last_producer_;
  }

  // The PRODUCE text, or its PRODUCE_CHUNK pieces when it is too long; `confirm` asks for an ack on the
  // PRODUCE or the last piece.
  Status produce(ProduceRequest r, Callback<uint64_t> confirm) {
    r.from = default_from(r);
    std::string text = produce_json(r);
    if (!r.attachments.empty() || text.size() <= kChunkThreshold || utf16_length(text) <= kChunkThreshold) {
      if (!confirm) return conn_->emit(nsp_, "PRODUCE", text, std::move(r.attachments));
      conn_->request(nsp_, "PRODUCE", text, std::move(r.attachments), {}, stored_count(std::move(confirm)));
      return Ok{};
    }
    auto pieces = utf8_pieces(text, kChunkThreshold);
    std::string transfer = auth::random_hex(8);
    for (size_t i = 0; i < pieces.size(); ++i) {
      json::Object o;
      o.str("transferId", transfer).num("index", static_cast<int64_t>(i)).num("total", static_cast<int64_t>(pieces.size()));
      o.str("data", pieces[i]);
      bool last = i + 1 == pieces.size();
      if (last && confirm) {
        conn_->request(nsp_, "PRODUCE_CHUNK", o.done(), {}, {}, stored_count(std::move(confirm)));
        return Ok{};
      }
      auto st = conn_->emit(nsp_, "PRODUCE_CHUNK", o.done());
      if (!st) {
        if (confirm) confirm(st.error());
        return st;
      }
    }
    return Ok{};
  }

  static ReplyCallback stored_count(Callback<uint64_t> done) {
    return [done = std::move(done)](Result<Reply> r) {
      auto e = answer(r);
      if (!e) return done(e.error());
      done(json::get_u64(*e, "stored"));
    };
  }

  // ---- subscriptions ----

  Status subscribe(SubscribeRequest r, std::function<void(const ConsumedMessage&)> handler) {
    if (r.event.empty()) return Error{errc::bad_request, "subscribe needs an event"};
    auto sub = std::make_shared<Sub>();
    {
      std::lock_guard lock(mu_);
      if (r.consumer.empty()) r.consumer = last_consumer_;
    }
    if (r.mode == "topic" && r.producer.empty()) r.producer = std::string(kAllProducers);
    if (r.consumer_id.empty()) r.consumer_id = r.consumer;
    sub->request = r;
    sub->args = subscribe_json(r);
    sub->event = consume_event_name(r.producer.empty() ? "ANONYMOUS" : r.producer, r.event, r.scope);
    sub->auto_ack = r.ack && !r.manual_ack;
    sub->handler = std::move(handler);
    bool listen = false;
    {
      std::lock_guard lock(mu_);
      subs_.push_back(sub);
      auto& list = by_event_[sub->event];
      listen = list.empty();
      list.push_back(sub);
    }
    if (listen) {
      std::weak_ptr<Impl> weak = weak_from_this();
      std::string event = sub->event;
      conn_->on(nsp_, event, [weak, event](const Reply& reply) {
        auto self = weak.lock();
        if (!self) return;
        auto e = json::first_arg(json::thread_parser(), reply.json);
        if (e && e->is_object()) self->deliver(event, delivery_of(*e, reply.attachments));
      });
    }
    return conn_->emit(nsp_, "SUBSCRIBE", sub->args);
  }

  Status unsubscribe(std::string_view producer, std::string_view event, std::string consumer) {
    {
      std::lock_guard lock(mu_);
      if (consumer.empty()) consumer = last_consumer_;
      std::erase_if(subs_, [&](const std::shared_ptr<Sub>& s) {
        bool match = s->request.producer == producer && s->request.event == event && s->request.consumer == consumer;
        if (match) std::erase(by_event_[s->event], s);
        return match;
      });
    }
    json::Object o;
    o.str("event", event).str("producer", producer).str_if("consumer", consumer);
    return conn_->emit(nsp_, "UNSUBSCRIBE", o.done());
  }

  void deliver(const std::string& event, const ConsumedMessage& m) {
    std::vector<std::shared_ptr<Sub>> subs;
    {
      std::lock_guard lock(mu_);
      auto it = by_event_.find(event);
      if (it == by_event_.end()) return;
      subs = it->second;
    }
    bool ack = false;
    for (auto& s : subs) {
      s->handler(m);
      ack |= s->auto_ack;
    }
    if (ack && !m.msg_id.empty()) (void)conn_->emit(nsp_, "ACK", json::Object().str("msgId", m.msg_id).done());
  }

  // ---- incoming events ----

  void on_auth_ok(const Reply& r) {
    auto waiter = take_auth_waiter();
    if (!waiter) return;
    auto e = json::first_arg(json::thread_parser(), r.json);
    AuthResult result;
    if (e && e->is_object()) result = AuthResult{json::get_str(*e, "realm"), json::get_str(*e, "role")};
    {
      std::lock_guard lock(mu_);
      auth_ = waiter->request;
    }
    if (waiter->done) waiter->done(result);
  }

  void on_auth_fail(const Reply& r) {
    ServerError err = error_of("AUTH_FAIL", r);
    // A gate refusal is not the answer to an AUTHENTICATION: report it as an error.
    bool gate = err.message.starts_with("Authentication required before") || err.message.starts_with("Role '");
    std::optional<AuthWaiter> waiter;
    if (!gate) waiter = take_auth_waiter();
    if (!waiter) return report(err);
    if (waiter->done) waiter->done(Error{err.code, err.message});
  }

  void on_chunk(const Reply& r) {
    auto e = json::first_arg(json::thread_parser(), r.json);
    if (!e || !e->is_object()) return;
    std::string id = json::get_str(*e, "transferId");
    int64_t index = json::get_i64(*e, "index", -1);
    int64_t total = json::get_i64(*e, "total", 0);
    std::string data = json::get_str(*e, "data");
    if (id.empty() || total <= 0 || static_cast<size_t>(total) > kMaxIncomingPieces || index < 0 || index >= total) return;
    auto it = transfers_.find(id);
    if (it == transfers_.end()) {
      if (transfers_.size() >= kMaxIncomingTransfers) transfers_.erase(transfers_.begin());  // the oldest id goes
      it = transfers_.emplace(id, Transfer{json::get_str(*e, "event"), static_cast<size_t>(total), {}, 0}).first;
    }
    Transfer& t = it->second;
    if (t.total != static_cast<size_t>(total)) return;
    t.bytes += data.size();
    if (t.bytes > max_transfer_bytes_) {
      report(ServerError{"CONSUME_CHUNK", errc::protocol, "a chunked delivery exceeded max_message_bytes; dropped", {}});
      transfers_.erase(it);
      return;
    }
    t.pieces[static_cast<size_t>(index)] = std::move(data);
    if (t.pieces.size() < t.total) return;
    std::string whole;
    whole.reserve(t.bytes);
    for (auto& [i, piece] : t.pieces) whole += piece;
    std::string event = std::move(t.event);
    transfers_.erase(it);
    auto doc = json::thread_parser().parse(whole.data(), whole.size());
    if (doc.error() || !doc.value_unsafe().is_object()) return;
    deliver(event, delivery_of(doc.value_unsafe(), {}));
  }

  void on_approved(const Reply& r) { decided(true, r); }
  void on_rejected(const Reply& r) { decided(false, r); }

  void decided(bool approved, const Reply& r) {
    auto e = json::first_arg(json::thread_parser(), r.json);
    if (!e || !e->is_object()) return;
    AuthorizationDecision d{approved, json::get_str(*e, "request_id"), json::get_str(*e, "realm"), json::get_str(*e, "role"),
                            json::get_str(*e, "reason")};
    std::shared_ptr<std::function<void(const AuthorizationDecision&)>> h;
    {
      std::lock_guard lock(mu_);
      h = decided_handler_;
    }
    if (h) (*h)(d);
  }

  void report(const ServerError& err) {
    std::shared_ptr<std::function<void(const ServerError&)>> h;
    {
      std::lock_guard lock(mu_);
      h = error_handler_;
    }
    if (h) (*h)(err);
  }

  void on_presence_event(std::string kind, std::string to, const Reply& r) {
    auto e = json::first_arg(json::thread_parser(), r.json);
    if (!e || !e->is_object()) return;
    Presence p;
    p.kind = std::move(kind);
    p.to = std::move(to);
    p.socket = json::get_str(*e, "socket");
    p.producer = json::get_str(*e, "producer");
    p.consumer = json::get_str(*e, "consumer");
    p.name = json::get_str(*e, "name");
    p.events = json::get_strs(*e, "events");
    p.online = json::get_bool(*e, "online");
    p.raw = json::to_json(*e);
    std::shared_ptr<std::function<void(const Presence&)>> h;
    {
      std::lock_guard lock(mu_);
      h = presence_handler_;
    }
    if (h) (*h)(p);
  }

  // Called with mu_ held.
  void listen_presence(const std::string& name) {
    std::weak_ptr<Impl> weak = weak_from_this();
    for (const char* kind : {"SUBSCRIBE-TO", "CONNECT", "DISCONNECT"}) {
      if (!listened_presence_.insert(std::string(kind) + "-" + name).second) continue;
      conn_->on(nsp_, std::string(kind) + "-" + name, [weak, kind, name](const Reply& r) {
        if (auto self = weak.lock()) self->on_presence_event(kind, name, r);
      });
    }
  }

  // ---- reconnect ----

  void rejoin(std::shared_ptr<RejoinSender> sender) {
    std::optional<AuthRequest> auth;
    std::vector<std::string> producers, consumers, subs;
    {
      std::lock_guard lock(mu_);
      auth = auth_;
      producers = producers_;
      consumers = consumers_;
      for (auto& s : subs_) subs.push_back(s->args);
    }
    auto registrations = [sender, producers, consumers, subs] {
      for (auto& p : producers) sender->emit("PRODUCER", registration_json(true, p));
      for (auto& c : consumers) sender->emit("CONSUMER", registration_json(false, c));
      for (auto& s : subs) sender->emit("SUBSCRIBE", s);
      sender->done();
    };
    if (!auth) return registrations();
    {
      std::lock_guard lock(mu_);
      // First in line: nothing else can have been sent on the new connection yet.
      auth_waiters_.push_front(AuthWaiter{*auth, [registrations](Result<AuthResult>) { registrations(); }});
    }
    sender->emit("AUTHENTICATION", auth_json(*auth));
  }

  struct AuthWaiter {
    AuthRequest request;
    Callback<AuthResult> done;
  };

  std::optional<AuthWaiter> take_auth_waiter() {
    std::lock_guard lock(mu_);
    if (auth_waiters_.empty()) return std::nullopt;
    AuthWaiter w = std::move(auth_waiters_.front());
    auth_waiters_.pop_front();
    return w;
  }

  void fail_auth_waiters(const Error& e) {
    std::deque<AuthWaiter> waiters;
    {
      std::lock_guard lock(mu_);
      waiters.swap(auth_waiters_);
    }
    for (auto& w : waiters)
      if (w.done) w.done(e);
  }

  struct Sub {
    SubscribeRequest request;
    std::string args;
    std::string event;
    bool auto_ack = false;
    std::function<void(const ConsumedMessage&)> handler;
  };

  struct Transfer {
    std::string event;
    size_t total = 0;
    std::map<size_t, std::string> pieces;
    size_t bytes = 0;
  };

  std::string nsp_;
  size_t max_transfer_bytes_;
  std::unique_ptr<Connection> conn_;
  std::mutex mu_;
  std::optional<AuthRequest> auth_;
  std::deque<AuthWaiter> auth_waiters_;
  std::vector<std::string> producers_, consumers_;
  std::string last_producer_, last_consumer_;
  std::vector<std::shared_ptr<Sub>> subs_;
  std::unordered_map<std::string, std::vector<std::shared_ptr<Sub>>> by_event_;
  std::set<std::string> listened_presence_;
  std::shared_ptr<std::function<void(const Presence&)>> presence_handler_;
  std::shared_ptr<std::function<void(const ServerError&)>> error_handler_;
  std::shared_ptr<std::function<void(const AuthorizationDecision&)>> decided_handler_;
  std::map<std::string, Transfer> transfers_;  // io thread only
};

// ---- Client ----

Client::Client(Options options, std::string nsp) : impl_(std::make_shared<Impl>(std::move(options), nullptr, std::move(nsp))) {
  impl_->start();
}
Client::Client(Options options, boost::asio::io_context& io, std::string nsp)
    : impl_(std::make_shared<Impl>(std::move(options), &io, std::move(nsp))) {
  impl_->start();
}
Client::~Client() { impl_->conn_->shutdown(); }

std::future<Status> Client::connect() { return impl_->conn_->connect(); }
void Client::connect(std::function<void(Status)> done) { impl_->conn_->connect(std::move(done)); }
void Client::close() { impl_->conn_->close(); }
bool Client::connected() const { return impl_->conn_->state() == State::connected; }
const std::string& Client::nsp() const { return impl_->nsp_; }
Connection& Client::connection() { return *impl_->conn_; }

std::future<Result<AuthResult>> Client::authenticate(std::string token) {
  AuthRequest r;
  r.token = std::move(token);
  return authenticate(std::move(r));
}
std::future<Result<AuthResult>> Client::authenticate(AuthRequest request) {
  return detail::as_future<AuthResult>([&](Callback<AuthResult> cb) { authenticate(std::move(request), std::move(cb)); });
}
void Client::authenticate(AuthRequest request, Callback<AuthResult> done) { impl_->authenticate(std::move(request), std::move(done)); }

Status Client::register_producer(std::string name) { return impl_->register_name(true, std::move(name)); }
Status Client::register_consumer(std::string name) { return impl_->register_name(false, std::move(name)); }

Status Client::produce(std::string_view from, std::string_view event, std::string_view message_json) {
  ProduceRequest r;
  r.from = std::string(from);
  r.event = std::string(event);
  r.message = std::string(message_json);
  return produce(r);
}

Status Client::produce(const ProduceRequest& request) {
  if (request.event.empty()) return Error{errc::bad_request, "produce needs an event"};
  return impl_->produce(request, {});
}

std::future<Result<uint64_t>> Client::produce_confirmed(const ProduceRequest& request) {
  return detail::as_future<uint64_t>([&](Callback<uint64_t> cb) { produce_confirmed(request, std::move(cb)); });
}
void Client::produce_confirmed(const ProduceRequest& request, Callback<uint64_t> done) {
  if (request.event.empty()) return done(Error{errc::bad_request, "produce needs an event"});
  (void)impl_->produce(request, std::move(done));
}

Status Client::subscribe(SubscribeRequest request, std::function<void(const ConsumedMessage&)> handler) {
  return impl_->subscribe(std::move(request), std::move(handler));
}
Status Client::unsubscribe(std::string_view producer, std::string_view event, std::string_view consumer) {
  return impl_->unsubscribe(producer, event, std::string(consumer));
}

Status Client::ack(std::string_view msg_id) {
  return impl_->conn_->emit(impl_->nsp_, "ACK", json::Object().str("msgId", msg_id).done());
}

std::future<Status> Client::ack_confirmed(std::string_view msg_id) {
  return detail::as_future<Ok>([&](Callback<Ok> cb) {
    impl_->conn_->request(impl_->nsp_, "ACK", json::Object().str("msgId", msg_id).done(), {}, {},
                          [cb = std::move(cb)](Result<Reply> r) {
                            auto e = answer(r);
                            if (!e) return cb(e.error());
                            cb(Ok{});
                          });
  });
}

void Client::on_presence(std::function<void(const Presence&)> handler) {
  std::lock_guard lock(impl_->mu_);
  impl_->presence_handler_ = std::make_shared<std::function<void(const Presence&)>>(std::move(handler));
}
void Client::on_error(std::function<void(const ServerError&)> handler) {
  std::lock_guard lock(impl_->mu_);
  impl_->error_handler_ = std::make_shared<std::function<void(const ServerError&)>>(std::move(handler));
}
void Client::on_authorization_decided(std::function<void(const AuthorizationDecision&)> handler) {
  std::lock_guard lock(impl_->mu_);
  impl_->decided_handler_ = std::make_shared<std::function<void(const AuthorizationDecision&)>>(std::move(handler));
}

std::future<Result<std::string>> Client::ping(std::string_view payload_json) {
  return detail::as_future<std::string>([&](Callback<std::string> cb) {
    impl_->conn_->request(impl_->nsp_, "PING", payload_json, {}, {}, [cb = std::move(cb)](Result<Reply> r) {
      auto e = answer(r);
      if (!e) return cb(e.error());
      cb(e->is_string() ? std::string(e->get_string().value_unsafe()) : json::to_json(*e));
    });
  });
}

std::future<Result<AuthorizationSubmitted>> Client::request_authorization(const AuthorizationRequest& request) {
  return detail::as_future<AuthorizationSubmitted>(
      [&](Callback<AuthorizationSubmitted> cb) { request_authorization(request, std::move(cb)); });
}
void Client::request_authorization(const AuthorizationRequest& r, Callback<AuthorizationSubmitted> done) {
  json::Object o;
  o.str("realm", r.realm).str("client_id", r.client_id).str("client_name", r.client_name).str("client_token", r.client_token);
  o.str_if("role", r.role);
  if (!r.challenge_response_json.empty()) o.raw("challenge_response", r.challenge_response_json);
  impl_->conn_->request(impl_->nsp_, "AUTHORIZATION_REQUEST", o.done(), {}, {}, [done = std::move(done)](Result<Reply> reply) {
    auto e = answer(reply);
    if (!e) return done(e.error());
    done(AuthorizationSubmitted{json::get_str(*e, "request_id"), json::get_str(*e, "status")});
  });
}

void Client::signed_request(std::string_view event, std::string_view action, std::string_view secret,
                            std::string_view body_json, Callback<std::string> done) {
  auto proof = create_admin_proof(secret, action, body_json);
  if (!proof) return done(proof.error());
  std::string args = json::Object().raw("body", body_json).raw("proof", proof->json()).done();
  impl_->conn_->request(impl_->nsp_, event, args, {}, {}, [done = std::move(done)](Result<Reply> r) {
    auto e = answer(r);
    if (!e) return done(e.error());
    done(json::to_json(*e));
  });
}

std::future<Result<std::optional<PendingAuthRequest>>> Client::authorization_next(std::string_view secret, std::string_view realm) {
  using Next = std::optional<PendingAuthRequest>;
  return detail::as_future<Next>([&](Callback<Next> cb) {
    signed_request("AUTHORIZATION_NEXT", "AUTHORIZATION_NEXT", secret, json::Object().str_if("realm", realm).done(),
                   [cb = std::move(cb)](Result<std::string> r) {
                     if (!r) return cb(r.error());
                     auto doc = json::thread_parser().parse(r->data(), r->size());
                     if (doc.error()) return cb(Error{errc::protocol, "unreadable answer"});
                     simdjson::dom::object request;
                     if (!json::get_object(doc.value_unsafe(), "request", request)) return cb(Next{});
                     cb(Next{pending_of(doc.value_unsafe()["request"].value_unsafe())});
                   });
  });
}

std::future<Result<PendingAuthRequest>> Client::authorization_decide(std::string_view secret, std::string_view request_id,
                                                                     bool approved, std::string_view role,
                                                                     std::string_view reason) {
  return detail::as_future<PendingAuthRequest>([&](Callback<PendingAuthRequest> cb) {
    json::Object body;
    body.str("request_id", request_id).boolean("approved", approved).str_if("role", role).str_if("reason", reason);
    signed_request("AUTHORIZATION_DECIDE", "AUTHORIZATION_DECIDE", secret, body.done(), [cb = std::move(cb)](Result<std::string> r) {
      if (!r) return cb(r.error());
      auto doc = json::thread_parser().parse(r->data(), r->size());
      simdjson::dom::object request;
      if (doc.error() || !json::get_object(doc.value_unsafe(), "request", request))
        return cb(Error{errc::protocol, "no request in the answer"});
      cb(pending_of(doc.value_unsafe()["request"].value_unsafe()));
    });
  });
}

std::future<Result<RemoteTicket>> Client::remote_ticket(std::string_view role, std::string_view session_id,
                                                        std::string_view machine_id) {
  return detail::as_future<RemoteTicket>([&](Callback<RemoteTicket> cb) {
    json::Object o;
    o.str("role", role).str_if("session_id", session_id).str_if("machine_id", machine_id);
    impl_->conn_->request(impl_->nsp_, "REMOTE_TICKET_REQUEST", o.done(), {}, {}, [cb = std::move(cb)](Result<Reply> r) {
      auto e = answer(r);
      if (!e) return cb(e.error());
      cb(RemoteTicket{json::get_str(*e, "session_id"), json::get_str(*e, "ticket"), json::get_str(*e, "role"),
                      json::get_i64(*e, "expires_in")});
    });
  });
}

std::future<Status> Client::publish_key(std::string_view identity, std::string_view public_key, std::string_view key_id,
                                        std::string_view alg) {
  return detail::as_future<Ok>([&](Callback<Ok> cb) {
    json::Object o;
    o.str("identity", identity).str("public_key", public_key).str_if("key_id", key_id).str_if("alg", alg);
    impl_->conn_->request(impl_->nsp_, "KEY_PUBLISH", o.done(), {}, {}, [cb = std::move(cb)](Result<Reply> r) {
      auto e = answer(r);
      if (!e) return cb(e.error());
      cb(Ok{});
    });
  });
}

std::future<Result<std::vector<PublicKey>>> Client::lookup_keys(std::string_view identity) {
  return detail::as_future<std::vector<PublicKey>>([&](Callback<std::vector<PublicKey>> cb) {
    impl_->conn_->request(impl_->nsp_, "KEY_LOOKUP", json::Object().str("identity", identity).done(), {}, {},
                          [cb = std::move(cb)](Result<Reply> r) {
                            auto e = answer(r);
                            if (!e) return cb(e.error());
                            std::vector<PublicKey> keys;
                            simdjson::dom::array arr;
                            if (json::get_array(*e, "keys", arr))
                              for (auto k : arr)
                                keys.push_back(PublicKey{json::get_str(k, "key_id"), json::get_str(k, "alg"),
                                                         json::get_str(k, "public_key"), json::get_str(k, "updated_at")});
                            cb(std::move(keys));
                          });
  });
}

}  // namespace siomq::tyomq
