#include "redis/async_client.h"

#include <hiredis/async.h>
#include <hiredis/hiredis.h>

#include <boost/asio/post.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>

namespace siomq::redis {

namespace asio = boost::asio;

// The socket as Asio sees it, for hiredis's event hooks. hiredis owns the descriptor (it closes it), so
// the stream_descriptor is released, never closed, when hiredis cleans up. Each wait holds the watcher
// and the client alive across the hiredis call it makes, which may free the context.
struct AsyncClient::Watcher : std::enable_shared_from_this<Watcher> {
  Watcher(asio::io_context& io, int fd, std::weak_ptr<AsyncClient> client) : sd(io, fd), client(std::move(client)) {}
  asio::posix::stream_descriptor sd;
  std::weak_ptr<AsyncClient> client;
  redisAsyncContext* ac = nullptr;  // null after cleanup
  bool want_read = false, want_write = false;
  bool read_armed = false, write_armed = false;

  void arm_read() {
    if (!ac || !want_read || read_armed) return;
    read_armed = true;
    sd.async_wait(asio::posix::stream_descriptor::wait_read, [self = shared_from_this()](const boost::system::error_code& ec) {
      self->read_armed = false;
      if (ec || !self->ac || !self->want_read) return;
      auto keep = self->client.lock();
      redisAsyncHandleRead(self->ac);  // may free the context: cleanup() clears ac
      self->arm_read();
    });
  }
  void arm_write() {
    if (!ac || !want_write || write_armed) return;
    write_armed = true;
    sd.async_wait(asio::posix::stream_descriptor::wait_write, [self = shared_from_this()](const boost::system::error_code& ec) {
      self->write_armed = false;
      if (ec || !self->ac || !self->want_write) return;
      auto keep = self->client.lock();
      redisAsyncHandleWrite(self->ac);
      self->arm_write();
    });
  }
  void cleanup() {
    ac = nullptr;
    want_read = want_write = false;
    boost::system::error_code ignored;
    sd.cancel(ignored);
    (void)sd.release();  // hiredis closes the descriptor
  }

  static Watcher* of(void* p) { return static_cast<Watcher*>(p); }
  static void add_read(void* p) { of(p)->want_read = true, of(p)->arm_read(); }
  static void del_read(void* p) { of(p)->want_read = false; }
  static void add_write(void* p) { of(p)->want_write = true, of(p)->arm_write(); }
  static void del_write(void* p) { of(p)->want_write = false; }
  static void on_cleanup(void* p) { of(p)->cleanup(); }
};

namespace {

Value copy_scalar(const redisReply* r) {
  Value v;
  switch (r->type) {
    case REDIS_REPLY_STRING: v.kind = Value::Kind::string; break;
    case REDIS_REPLY_STATUS: v.kind = Value::Kind::status; break;
    case REDIS_REPLY_ERROR: v.kind = Value::Kind::error; break;
    case REDIS_REPLY_INTEGER: v.kind = Value::Kind::integer; v.integer = r->integer; return v;
    case REDIS_REPLY_ARRAY: v.kind = Value::Kind::nested; return v;
    default: return v;  // nil
  }
  v.text.assign(r->str ? r->str : "", r->str ? r->len : 0);
  return v;
}

// Flat by construction: the elements of an array are copied as scalars (an inner array is `nested`).
Value copy_reply(const redisReply* r) {
  if (r->type != REDIS_REPLY_ARRAY) return copy_scalar(r);
  Value v;
  v.kind = Value::Kind::array;
  v.items.reserve(r->elements);
  for (size_t i = 0; i < r->elements; ++i) v.items.push_back(copy_scalar(r->element[i]));
  return v;
}

// The per-command state hiredis carries as privdata until the reply (or the connection's end) comes.
struct Pending {
  AsyncClient::ReplyHandler handler;
};

}  // namespace

AsyncClient::AsyncClient(asio::io_context& io, std::string name) : io_(io), name_(std::move(name)) {}

AsyncClient::~AsyncClient() { close(); }

std::shared_ptr<AsyncClient> AsyncClient::connect(asio::io_context& io, const Url& url, std::string name,
                                                  std::chrono::milliseconds timeout, Done ready) {
  std::shared_ptr<AsyncClient> c(new AsyncClient(io, std::move(name)));
  c->ready_cb_ = std::move(ready);
  c->start(url, timeout);
  return c;
}

void AsyncClient::start(const Url& url, std::chrono::milliseconds timeout) {
  redisAsyncContext* ac = redisAsyncConnect(url.host.c_str(), url.port);
  if (!ac || ac->err) {
    std::string why = ac ? ac->errstr : "out of memory";
    if (ac) redisAsyncFree(ac);
    asio::post(io_, [self = shared_from_this(), why] { self->finish_ready(make_error("cannot connect to redis: " + why, 503)); });
    return;
  }
  ac_ = ac;
  ac->data = this;
  redisEnableKeepAlive(&ac->c);
  watcher_ = std::make_shared<Watcher>(io_, ac->c.fd, weak_from_this());
  watcher_->ac = ac;
  ac->ev.data = watcher_.get();
  ac->ev.addRead = &Watcher::add_read;
  ac->ev.delRead = &Watcher::del_read;
  ac->ev.addWrite = &Watcher::add_write;
  ac->ev.delWrite = &Watcher::del_write;
  ac->ev.cleanup = &Watcher::on_cleanup;
  redisAsyncSetConnectCallback(ac, &AsyncClient::on_connect);
  redisAsyncSetDisconnectCallback(ac, &AsyncClient::on_disconnect);
  connect_timer_ = std::make_unique<asio::steady_timer>(io_, timeout);
  connect_timer_->async_wait([weak = weak_from_this()](const boost::system::error_code& ec) {
    auto self = weak.lock();
    if (ec || !self || self->ready_ || !self->ready_cb_) return;
    self->finish_ready(make_error("cannot connect to redis: timed out", 503));
  });
  handshake(url);  // queued now, written once the connection is up
}

// AUTH, SELECT and the name go out first; the last reply decides whether the connection is ready.
void AsyncClient::handshake(const Url& url) {
  auto check = [weak = weak_from_this()](const char* what) {
    return [weak, what](Result<Value> r) {
      auto self = weak.lock();
      if (!self || self->ready_ || !self->ready_cb_) return;
      if (!r) return self->finish_ready(make_error(std::string("redis ") + what + ": " + r.error().message, 503));
      if (r->kind == Value::Kind::error) return self->finish_ready(make_error(std::string("redis ") + what + ": " + r->text, 503));
    };
  };
  if (!url.password.empty()) {
    std::vector<std::string> auth{"AUTH"};
    if (!url.user.empty()) auth.push_back(url.user);
    auth.push_back(url.password);
    command(auth, check("AUTH"));
  }
  if (url.db != 0) command({"SELECT", std::to_string(url.db)}, check("SELECT"));
  // Named for CLIENT LIST; a server that refuses CLIENT (ACLs) works as well without.
  command({"CLIENT", "SETNAME", name_}, [](Result<Value>) {});
  command({"PING"}, [weak = weak_from_this(), inner = check("PING")](Result<Value> r) {
    auto self = weak.lock();
    bool ok = r && r->kind != Value::Kind::error;
    inner(std::move(r));
    if (self && ok && !self->ready_ && self->ready_cb_) self->finish_ready(Ok{});
  });
}

void AsyncClient::finish_ready(const Status& s) {
  Done cb = std::move(ready_cb_);
  ready_cb_ = nullptr;
  if (connect_timer_) connect_timer_->cancel();
  if (s) {
    ready_ = true;
  } else {
    close();
  }
  if (cb) cb(s);
}

void AsyncClient::on_connect(const redisAsyncContext* ac, int status) {
  auto* self = static_cast<AsyncClient*>(ac->data);
  if (status == REDIS_OK) return;  // the handshake's replies decide
  // hiredis frees the context after this call.
  self->ac_ = nullptr;
  std::string why = ac->errstr ? ac->errstr : "connection failed";
  if (self->ready_cb_) self->finish_ready(make_error("cannot connect to redis: " + why, 503));
}

void AsyncClient::on_disconnect(const redisAsyncContext* ac, int status) {
  auto* self = static_cast<AsyncClient*>(ac->data);
  self->ac_ = nullptr;  // freed by hiredis after this call
  if (self->closing_) return;
  std::string why = status == REDIS_OK ? "closed" : (ac->errstr ? ac->errstr : "connection lost");
  if (self->ready_cb_) {
    self->finish_ready(make_error("cannot connect to redis: " + why, 503));
    return;
  }
  self->gone(why);
}

void AsyncClient::gone(const std::string& why) {
  bool was_ready = ready_;
  ready_ = false;
  if (was_ready && on_down_) {
    auto f = std::move(on_down_);
    on_down_ = nullptr;
    // Posted: the owner may destroy this client, which must not happen inside hiredis.
    asio::post(io_, [f = std::move(f), why] { f(why); });
  }
}

void AsyncClient::on_reply(redisAsyncContext* ac, void* reply, void* privdata) {
  (void)ac;
  std::unique_ptr<Pending> p(static_cast<Pending*>(privdata));
  if (!reply) return p->handler(make_error("redis connection closed", 503));
  p->handler(copy_reply(static_cast<redisReply*>(reply)));
}

void AsyncClient::on_message(redisAsyncContext* ac, void* reply, void* privdata) {
  (void)privdata;
  auto* self = static_cast<AsyncClient*>(ac->data);
  auto* r = static_cast<redisReply*>(reply);
  if (!r || r->type != REDIS_REPLY_ARRAY || r->elements < 3) return;
  std::string_view kind(r->element[0]->str ? r->element[0]->str : "", r->element[0]->str ? r->element[0]->len : 0);
  if (kind == "subscribe") {
    if (self->unconfirmed_channels_ > 0 && --self->unconfirmed_channels_ == 0 && self->subscribed_cb_) {
      Done cb = std::move(self->subscribed_cb_);
      self->subscribed_cb_ = nullptr;
      cb(Ok{});
    }
    return;
  }
  if (kind != "message" || !self->message_handler_) return;
  const redisReply* channel = r->element[1];
  const redisReply* body = r->element[2];
  if (channel->type != REDIS_REPLY_STRING || body->type != REDIS_REPLY_STRING) return;
  (*self->message_handler_)(std::string_view(channel->str, channel->len), std::string_view(body->str, body->len));
}

bool AsyncClient::send(const std::vector<std::string>& args, void (*fn)(redisAsyncContext*, void*, void*), void* privdata) {
  if (!ac_) return false;
  std::vector<const char*> argv;
  std::vector<size_t> lengths;
  argv.reserve(args.size());
  lengths.reserve(args.size());
  for (const auto& a : args) {
    argv.push_back(a.data());
    lengths.push_back(a.size());
  }
  return redisAsyncCommandArgv(ac_, fn, privdata, static_cast<int>(argv.size()), argv.data(), lengths.data()) == REDIS_OK;
}

void AsyncClient::command(const std::vector<std::string>& args, ReplyHandler h) {
  auto p = std::make_unique<Pending>(Pending{std::move(h)});
  if (send(args, &AsyncClient::on_reply, p.get())) {
    (void)p.release();  // hiredis hands it back to on_reply
    return;
  }
  asio::post(io_, [p = std::shared_ptr<Pending>(std::move(p))] { p->handler(make_error("redis is not connected", 503)); });
}

void AsyncClient::subscribe(const std::vector<std::string>& channels, MessageHandler h, Done subscribed) {
  message_handler_ = std::make_unique<MessageHandler>(std::move(h));
  subscribed_cb_ = std::move(subscribed);
  unconfirmed_channels_ = channels.size();
  std::vector<std::string> args{"SUBSCRIBE"};
  args.insert(args.end(), channels.begin(), channels.end());
  if (send(args, &AsyncClient::on_message, nullptr)) return;
  Done cb = std::move(subscribed_cb_);
  subscribed_cb_ = nullptr;
  if (cb) asio::post(io_, [cb] { cb(make_error("redis is not connected", 503)); });
}

void AsyncClient::close() {
  closing_ = true;
  ready_ = false;
  on_down_ = nullptr;
  if (connect_timer_) connect_timer_->cancel();
  if (redisAsyncContext* ac = ac_) {
    ac_ = nullptr;
    redisAsyncFree(ac);  // pending callbacks get a null reply; inside a callback hiredis defers the free
  }
}

}  // namespace siomq::redis
