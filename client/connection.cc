// siomq::Connection (siomq/connection.h): the io-thread state machine behind the public calls —
// connect through the URLs in turn, join the namespaces, run the rejoin hooks, send what waited, and on
// a drop fail what was in flight and come back after a growing, jittered delay.
#include "siomq/connection.h"

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <deque>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <thread>
#include <unordered_map>

#include "outbox.h"
#include "transport/engine_socket.h"
#include "wire/socketio.h"

namespace siomq {
namespace asio = boost::asio;
using client::EngineSocket;
using Clock = std::chrono::steady_clock;

const char* to_string(State state) {
  switch (state) {
    case State::idle: return "idle";
    case State::connecting: return "connecting";
    case State::connected: return "connected";
    case State::reconnecting: return "reconnecting";
    case State::closed: return "closed";
  }
  return "?";
}

std::string json_string(std::string_view s) {
  std::string out;
  sio::append_json_string(out, s);
  return out;
}

std::string attachment_placeholder(size_t i) {
  return "{\"_placeholder\":true,\"num\":" + std::to_string(i) + "}";
}

namespace {

// An event's data array without its first element (the name): "[\"e\",1,2]" -> "[1,2]".
std::string event_args(std::string_view data) {
  size_t i = 1;
  auto skip_ws = [&] {
    while (i < data.size() && (data[i] == ' ' || data[i] == '\n' || data[i] == '\r' || data[i] == '\t')) ++i;
  };
  skip_ws();
  if (i >= data.size() || data[i] != '"') return "[]";
  for (++i; i < data.size() && data[i] != '"'; ++i) {
    if (data[i] == '\\') ++i;
  }
  ++i;
  skip_ws();
  if (i >= data.size() || data[i] != ',') return "[]";
  std::string out = "[";
  out.append(data.substr(i + 1));
  return out;
}

std::string handler_key(std::string_view nsp, std::string_view event) {
  std::string key(nsp);
  key.push_back('\0');
  key.append(event);
  return key;
}

}  // namespace

class Connection::Impl : public std::enable_shared_from_this<Connection::Impl> {
 public:
  Impl(Options options, asio::io_context* borrowed) : options_(std::move(options)) {
    if (borrowed) {
      io_ = borrowed;
    } else {
      owned_io_ = std::make_unique<asio::io_context>(1);
      io_ = owned_io_.get();
    }
    reconnect_timer_ = std::make_unique<asio::steady_timer>(*io_);
    outbox_ = std::make_shared<Outbox>(*io_, options_, [this](uint64_t ack_id, uint64_t generation) {
      // The Outbox lives and dies with this state; a socket of another generation has gone.
      if (socket_ && generation == generation_) socket_->forget_ack(ack_id);
    });
  }

  void start_thread() {
    if (!owned_io_) return;
    work_ = std::make_unique<asio::executor_work_guard<asio::io_context::executor_type>>(owned_io_->get_executor());
    thread_ = std::thread([self = shared_from_this()] { self->owned_io_->run(); });
  }

  // Called by the owner (shutdown, then the destructor): once joined, the thread is not joinable, so
  // the second call returns at once.
  void stop_thread() {
    if (!owned_io_) return;
    work_.reset();
    if (!thread_.joinable()) return;
    if (thread_.get_id() == std::this_thread::get_id()) thread_.detach();  // destroyed from its own callback
    else thread_.join();
  }

  // Runs `fn` on the io thread after every call queued before it. One asio post per batch of calls.
  void run_later(std::function<void()> fn) {
    bool post_now;
    {
      std::lock_guard lock(mu_);
      post_now = ops_.empty();
      ops_.push_back(std::move(fn));
    }
    if (post_now) asio::post(*io_, [self = shared_from_this()] { self->run_ops(); });
  }

  void run_ops() {
    std::vector<std::function<void()>> ops;
    {
      std::lock_guard lock(mu_);
      ops.swap(ops_);
    }
    for (auto& op : ops) op();
  }

  // ---- public calls (any thread) ----

  Status emit(std::string_view nsp, std::string_view event, std::string_view args, std::vector<std::string> attachments) {
    auto out = make_outgoing(nsp, event, args, std::move(attachments));
    if (auto st = admit(out.bytes); !st) return st;
    run_later([self = shared_from_this(), out = std::move(out)]() mutable { self->send_or_hold(std::move(out)); });
    return Ok{};
  }

  void request(std::string_view nsp, std::string_view event, std::string_view args, std::vector<std::string> attachments,
               milliseconds timeout, ReplyCallback done) {
    auto out = make_outgoing(nsp, event, args, std::move(attachments));
    if (auto st = admit(out.bytes); !st) return done(st.error());
    out.done = std::move(done);
    out.deadline = Clock::now() + (timeout.count() > 0 ? timeout : options_.request_timeout);
    run_later([self = shared_from_this(), out = std::move(out)]() mutable { self->start_request(std::move(out)); });
  }

  State state() const { return state_.load(); }

  std::string socket_id(const std::string& nsp) const {
    std::lock_guard lock(mu_);
    auto it = socket_ids_.find(nsp);
    return it == socket_ids_.end() ? std::string() : it->second;
  }

  // ---- io thread ----

  void connect(std::function<void(Status)> done) {
    if (user_closed_) return done(Error{errc::closed, "the connection was closed"});
    if (done) connect_waiters_.push_back(std::move(done));
    if (state_ == State::connected) return finish_connect(Ok{});
    if (state_ != State::idle) return;  // already on its way
    if (namespaces_.empty()) namespaces_.push_back(Namespace{"/", {}});
    set_state(State::connecting, {});
    round_left_ = options_.urls.size();
    attempt();
  }

  void join(std::string nsp, std::string auth, std::function<void(Status)> done) {
    if (user_closed_) return done ? done(Error{errc::closed, "the connection was closed"}) : void();
    Namespace* ns = find(nsp);
    if (!ns) {
      namespaces_.push_back(Namespace{nsp, std::move(auth)});
      ns = &namespaces_.back();
      if (socket_ && socket_->open_done()) socket_->join(ns->name, ns->auth);
    }
    if (ns->refused) return done ? done(*ns->refused) : void();
    if (ns->ready) return done ? done(Ok{}) : void();
    if (done) ns->join_waiters.push_back(std::move(done));
  }

  void on_rejoin(std::string nsp, RejoinHook hook) { rejoin_hooks_[std::move(nsp)].push_back(std::move(hook)); }
  void on_state(std::function<void(State, const std::string&)> handler) { state_handlers_.push_back(std::move(handler)); }

  void on(uint64_t id, std::string nsp, std::string event, EventHandler handler) {
    auto key = handler_key(nsp, event);
    handler_keys_[id] = key;
    handlers_[key].emplace_back(id, std::move(handler));
  }

  void off(uint64_t id) {
    auto k = handler_keys_.find(id);
    if (k == handler_keys_.end()) return;
    auto it = handlers_.find(k->second);
    if (it != handlers_.end()) {
      std::erase_if(it->second, [id](const auto& h) { return h.first == id; });
      if (it->second.empty()) handlers_.erase(it);
    }
    handler_keys_.erase(k);
  }

  void close() {
    if (user_closed_) return;
    user_closed_ = true;
    closed_flag_ = true;
    reconnect_timer_->cancel();
    if (socket_) socket_->close();
    socket_.reset();
    ++generation_;
    Error closed{errc::closed, "the connection was closed"};
    outbox_->fail_all(closed);
    for (auto& ns : namespaces_) fail_waiters(ns, closed);
    set_state(State::closed, "closed by the client");
    finish_connect(closed);
  }

  std::atomic<bool> closed_flag_{false};
  std::atomic<uint64_t> next_handler_id_{1};

 private:
  struct Namespace {
    Namespace(std::string n, std::string a) : name(std::move(n)), auth(std::move(a)) {}
    std::string name;
    std::string auth;
    bool joined = false;
    bool ready = false;  // joined and its rejoin hooks done
    size_t hooks_pending = 0;
    std::optional<Error> refused;
    std::vector<std::function<void(Status)>> join_waiters;
  };

  class Sender : public RejoinSender {
   public:
    Sender(std::weak_ptr<Impl> impl, std::string nsp, uint64_t generation)
        : impl_(std::move(impl)), nsp_(std::move(nsp)), generation_(generation) {}
    void emit(std::string_view event, std::string_view args) override {
      auto impl = live();
      if (!impl) return;
      auto out = impl->make_outgoing(nsp_, event, args, {});
      impl->socket_->emit_data(nsp_, out.data, {}, {});
    }
    void request(std::string_view event, std::string_view args, ReplyCallback done) override {
      auto impl = live();
      if (!impl) return done(Error{errc::disconnected, "the connection dropped"});
      auto out = impl->make_outgoing(nsp_, event, args, {});
      out.done = std::move(done);
      out.deadline = Clock::now() + impl->options_.request_timeout;
      impl->outbox_->track(out);
      impl->send(std::move(out));
    }
    void done() override {
      if (finished_) return;
      finished_ = true;
      if (auto impl = live()) impl->hook_done(nsp_);
    }

   private:
    std::shared_ptr<Impl> live() {
      auto impl = impl_.lock();
      if (!impl || impl->generation_ != generation_ || !impl->socket_) return nullptr;
      return impl;
    }
    std::weak_ptr<Impl> impl_;
    std::string nsp_;
    uint64_t generation_;
    bool finished_ = false;
  };

  Outgoing make_outgoing(std::string_view nsp, std::string_view event, std::string_view args,
                         std::vector<std::string> attachments) {
    Outgoing out;
    out.nsp = std::string(nsp);
    out.data.reserve(event.size() + args.size() + 8);
    out.data = "[";
    sio::append_json_string(out.data, event);
    if (!args.empty()) {
      out.data.push_back(',');
      out.data.append(args);
    }
    out.data.push_back(']');
    out.bytes = out.data.size();
    for (const auto& a : attachments) out.bytes += a.size();
    out.attachments = std::move(attachments);
    return out;
  }

  // Refuses at once what could never be sent: after close(), or past the buffer while disconnected.
  Status admit(size_t bytes) {
    if (closed_flag_) return Error{errc::closed, "the connection was closed"};
    return outbox_->admit(bytes, state_ == State::connected);
  }

  Namespace* find(const std::string& nsp) {
    for (auto& ns : namespaces_)
      if (ns.name == nsp) return &ns;
    return nullptr;
  }

  void set_state(State s, const std::string& reason) {
    if (state_ == s) return;
    state_ = s;
    for (auto& h : state_handlers_) h(s, reason);
  }

  void finish_connect(const Status& st) {
    auto waiters = std::move(connect_waiters_);
    connect_waiters_.clear();
    for (auto& w : waiters) w(st);
  }

  void fail_waiters(Namespace& ns, const Error& e) {
    auto waiters = std::move(ns.join_waiters);
    ns.join_waiters.clear();
    for (auto& w : waiters) w(e);
  }

  // ---- sending (what waits, and what is waited for, is the Outbox's) ----

  void send_or_hold(Outgoing out) {
    if (user_closed_) {
      if (out.request_id) outbox_->settle(out.request_id, Error{errc::closed, "the connection was closed"});
      return;
    }
    Namespace* ns = find(out.nsp);
    if (!ns) {
      // A namespace used before being joined is joined now (without a CONNECT payload).
      join(out.nsp, {}, {});
      ns = find(out.nsp);
    }
    if (ns->refused) {
      if (out.request_id) outbox_->settle(out.request_id, *ns->refused);
      return;
    }
    if (!ns->ready || !socket_ || outbox_->holding()) return outbox_->hold(std::move(out));
    send(std::move(out));
  }

  void start_request(Outgoing out) {
    if (user_closed_) return out.done(Error{errc::closed, "the connection was closed"});
    outbox_->track(out);
    send_or_hold(std::move(out));
  }

  // Out on the socket now; a request's answer is the Outbox's to deliver.
  void send(Outgoing out) {
    if (!out.request_id) {
      socket_->emit_data(out.nsp, out.data, std::move(out.attachments), {});
      return;
    }
    uint64_t ack = socket_->emit_data(out.nsp, out.data, std::move(out.attachments), outbox_->ack_handler(out.request_id));
    outbox_->sent(out.request_id, ack, generation_);
  }

  // Sends what was held, in order, for the namespaces that are ready; a refused namespace's fail, and a
  // namespace with a packet still held keeps the ones after it.
  void flush_held() {
    if (!socket_) return;
    std::set<std::string> blocked;
    for (auto& out : outbox_->take_held()) {
      if (out.request_id && !outbox_->waiting(out.request_id)) continue;  // timed out while held
      Namespace* ns = find(out.nsp);
      if (ns && ns->refused) {
        if (out.request_id) outbox_->settle(out.request_id, *ns->refused);
      } else if (!ns || !ns->ready || blocked.count(out.nsp)) {
        blocked.insert(out.nsp);
        outbox_->hold(std::move(out));
      } else {
        send(std::move(out));
      }
    }
  }

  // ---- connecting ----

  void attempt() {
    const std::string& url = options_.urls.empty() ? std::string("http://127.0.0.1:17352") : options_.urls[url_index_ % options_.urls.size()];
    client::TransportOptions t;
    t.eio = options_.eio;
    t.ca_file = options_.ca_file;
    t.timeout = options_.connect_timeout;
    t.max_message = options_.max_message_bytes;
    t.polling_fallback = options_.transport == Transport::websocket_then_polling;
    t.polling_only = options_.transport == Transport::polling;
    if (!client::parse_url(url, t)) return attempt_failed("bad URL " + url);
    uint64_t gen = ++generation_;
    std::weak_ptr<Impl> weak = weak_from_this();
    EngineSocket::Callbacks cb;
    cb.opened = [weak, gen] {
      auto self = weak.lock();
      if (!self || self->generation_ != gen) return;
      for (auto& ns : self->namespaces_)
        if (!ns.refused) self->socket_->join(ns.name, ns.auth);
    };
    cb.joined = [weak, gen](const std::string& nsp, std::optional<std::string> failure, const std::string& sid) {
      auto self = weak.lock();
      if (self && self->generation_ == gen) self->on_joined(nsp, std::move(failure), sid);
    };
    cb.left = [weak, gen](const std::string& nsp) {
      auto self = weak.lock();
      // The server put us out of a namespace: start over on a new connection, as for a drop.
      if (self && self->generation_ == gen && self->socket_) self->socket_->close();
      (void)nsp;
    };
    cb.event = [weak, gen](EngineSocket::Incoming&& in) {
      auto self = weak.lock();
      if (self && self->generation_ == gen) self->dispatch(std::move(in));
    };
    cb.closed = [weak, gen](std::string_view reason) {
      auto self = weak.lock();
      if (self && self->generation_ == gen) self->on_closed(std::string(reason));
    };
    socket_ = std::make_shared<EngineSocket>(*io_, std::move(t), std::move(cb));
    socket_->open();
  }

  void on_joined(const std::string& nsp, std::optional<std::string> failure, const std::string& sid) {
    Namespace* ns = find(nsp);
    if (!ns) return;
    if (failure) {
      ns->refused = Error{errc::refused, "connect refused on " + nsp + ": " + *failure};
      fail_waiters(*ns, *ns->refused);
      if (nsp == "/" && state_ == State::connecting) finish_connect(*ns->refused);
      flush_held();
      check_ready();
      return;
    }
    ns->joined = true;
    {
      std::lock_guard lock(mu_);
      socket_ids_[nsp] = sid;
    }
    auto hooks = rejoin_hooks_.find(nsp);
    ns->hooks_pending = hooks == rejoin_hooks_.end() ? 0 : hooks->second.size();
    if (ns->hooks_pending == 0) return namespace_ready(*ns);
    for (auto& hook : std::vector<RejoinHook>(hooks->second)) hook(std::make_shared<Sender>(weak_from_this(), nsp, generation_));
  }

  void hook_done(const std::string& nsp) {
    Namespace* ns = find(nsp);
    if (!ns || ns->hooks_pending == 0) return;
    if (--ns->hooks_pending == 0) namespace_ready(*ns);
  }

  void namespace_ready(Namespace& ns) {
    ns.ready = true;
    std::vector<std::function<void(Status)>> waiters;
    waiters.swap(ns.join_waiters);
    for (auto& w : waiters) w(Ok{});
    check_ready();
    flush_held();
  }

  void check_ready() {
    if (state_ == State::connected) return;
    for (const auto& ns : namespaces_)
      if (!ns.ready && !ns.refused) return;
    attempts_ = 0;
    ever_connected_ = true;
    set_state(State::connected, {});
    finish_connect(Ok{});
  }

  void dispatch(EngineSocket::Incoming&& in) {
    auto it = handlers_.find(handler_key(in.nsp, in.event));
    if (it == handlers_.end()) return;
    Reply reply{event_args(in.json), std::move(in.attachments)};
    // Handlers are added and removed only by queued calls, which never run inside this loop.
    for (auto& [id, h] : it->second) h(reply);
  }

  void on_closed(std::string reason) {
    socket_.reset();
    ++generation_;
    for (auto& ns : namespaces_) {
      ns.joined = false;
      ns.ready = false;
      ns.hooks_pending = 0;
    }
    {
      std::lock_guard lock(mu_);
      socket_ids_.clear();
    }
    outbox_->fail_sent();
    if (user_closed_) return;
    attempt_failed(std::move(reason));
  }

  void attempt_failed(std::string reason) {
    ++url_index_;
    if (!ever_connected_) {
      if (round_left_ > 1) {  // the first round goes through every URL at once
        --round_left_;
        return attempt();
      }
      if (!options_.retry_on_failed_connect || !options_.reconnect.enabled) {
        Error e{errc::unreachable, "no server answered: " + reason};
        outbox_->fail_all(e);
        set_state(State::idle, reason);
        finish_connect(e);
        return;
      }
    }
    if (!options_.reconnect.enabled ||
        (options_.reconnect.max_attempts > 0 && attempts_ >= options_.reconnect.max_attempts)) {
      Error e{errc::unreachable, "gave up reconnecting: " + reason};
      user_closed_ = true;
      closed_flag_ = true;
      outbox_->fail_all(e);
      for (auto& ns : namespaces_) fail_waiters(ns, e);
      set_state(State::closed, reason);
      finish_connect(e);
      return;
    }
    if (ever_connected_) set_state(State::reconnecting, reason);
    const auto& r = options_.reconnect;
    double delay = r.initial_delay.count() * std::pow(std::max(1.0, r.multiplier), std::min(attempts_, 30));
    delay = std::min(delay, static_cast<double>(r.max_delay.count()));
    std::uniform_real_distribution<double> jitter(1.0 - std::clamp(r.jitter, 0.0, 1.0), 1.0);
    delay *= jitter(rng_);
    ++attempts_;
    reconnect_timer_->expires_after(milliseconds(static_cast<int64_t>(delay)));
    reconnect_timer_->async_wait([weak = weak_from_this()](const boost::system::error_code& ec) {
      auto self = weak.lock();
      if (!self || ec || self->user_closed_) return;
      self->attempt();
    });
  }

  Options options_;
  std::unique_ptr<asio::io_context> owned_io_;
  asio::io_context* io_ = nullptr;
  std::unique_ptr<asio::executor_work_guard<asio::io_context::executor_type>> work_;
  std::thread thread_;

  // Shared with the callers' threads.
  mutable std::mutex mu_;
  std::vector<std::function<void()>> ops_;
  std::map<std::string, std::string> socket_ids_;
  std::atomic<State> state_{State::idle};

  // The io thread's own.
  std::shared_ptr<EngineSocket> socket_;
  uint64_t generation_ = 0;  // callbacks of an older socket are ignored
  std::deque<Namespace> namespaces_;  // a deque: pointers to its elements stay valid as it grows
  std::unordered_map<std::string, std::vector<RejoinHook>> rejoin_hooks_;
  std::unordered_map<std::string, std::vector<std::pair<uint64_t, EventHandler>>> handlers_;
  std::unordered_map<uint64_t, std::string> handler_keys_;
  std::shared_ptr<Outbox> outbox_;
  std::unique_ptr<asio::steady_timer> reconnect_timer_;
  std::vector<std::function<void(Status)>> connect_waiters_;
  std::vector<std::function<void(State, const std::string&)>> state_handlers_;
  size_t url_index_ = 0;
  size_t round_left_ = 0;
  int attempts_ = 0;
  bool ever_connected_ = false;
  bool user_closed_ = false;
  std::mt19937 rng_{std::random_device{}()};
};

Connection::Connection(Options options) : impl_(std::make_shared<Impl>(std::move(options), nullptr)) {
  impl_->start_thread();
}

Connection::Connection(Options options, asio::io_context& io) : impl_(std::make_shared<Impl>(std::move(options), &io)) {}

Connection::~Connection() {
  close();
  impl_->stop_thread();
}

std::future<Status> Connection::connect() {
  auto promise = std::make_shared<std::promise<Status>>();
  auto future = promise->get_future();
  connect([promise](Status st) { promise->set_value(std::move(st)); });
  return future;
}

void Connection::connect(std::function<void(Status)> done) {
  impl_->run_later([impl = impl_.get(), done = std::move(done)]() mutable { impl->connect(std::move(done)); });
}

std::future<Status> Connection::join(std::string nsp, std::string auth) {
  auto promise = std::make_shared<std::promise<Status>>();
  auto future = promise->get_future();
  join(std::move(nsp), std::move(auth), [promise](Status st) { promise->set_value(std::move(st)); });
  return future;
}

void Connection::join(std::string nsp, std::string auth, std::function<void(Status)> done) {
  impl_->run_later([impl = impl_.get(), nsp = std::move(nsp), auth = std::move(auth), done = std::move(done)]() mutable {
    impl->join(std::move(nsp), std::move(auth), std::move(done));
  });
}

void Connection::on_rejoin(std::string nsp, RejoinHook hook) {
  impl_->run_later([impl = impl_.get(), nsp = std::move(nsp), hook = std::move(hook)]() mutable {
    impl->on_rejoin(std::move(nsp), std::move(hook));
  });
}

void Connection::on_state(std::function<void(State, const std::string&)> handler) {
  impl_->run_later([impl = impl_.get(), handler = std::move(handler)]() mutable { impl->on_state(std::move(handler)); });
}

uint64_t Connection::on(std::string nsp, std::string event, EventHandler handler) {
  uint64_t id = impl_->next_handler_id_++;
  impl_->run_later([impl = impl_.get(), id, nsp = std::move(nsp), event = std::move(event), handler = std::move(handler)]() mutable {
    impl->on(id, std::move(nsp), std::move(event), std::move(handler));
  });
  return id;
}

void Connection::off(uint64_t id) {
  impl_->run_later([impl = impl_.get(), id] { impl->off(id); });
}

Status Connection::emit(std::string_view nsp, std::string_view event, std::string_view args,
                        std::vector<std::string> attachments) {
  return impl_->emit(nsp, event, args, std::move(attachments));
}

void Connection::request(std::string_view nsp, std::string_view event, std::string_view args,
                         std::vector<std::string> attachments, milliseconds timeout, ReplyCallback done) {
  impl_->request(nsp, event, args, std::move(attachments), timeout, std::move(done));
}

std::future<Result<Reply>> Connection::request(std::string_view nsp, std::string_view event, std::string_view args,
                                               std::vector<std::string> attachments, milliseconds timeout) {
  auto promise = std::make_shared<std::promise<Result<Reply>>>();
  auto future = promise->get_future();
  request(nsp, event, args, std::move(attachments), timeout,
          [promise](Result<Reply> r) { promise->set_value(std::move(r)); });
  return future;
}

void Connection::close() {
  if (impl_->closed_flag_.exchange(true)) return;
  impl_->run_later([impl = impl_.get()] { impl->close(); });
}

void Connection::shutdown() {
  close();
  impl_->stop_thread();
}

State Connection::state() const { return impl_->state(); }
std::string Connection::socket_id(const std::string& nsp) const { return impl_->socket_id(nsp); }
void Connection::post(std::function<void()> fn) { impl_->run_later(std::move(fn)); }

}  // namespace siomq
