// One asynchronous Redis connection (hiredis's async API) driven by an Asio io_context: commands with
// reply callbacks, pipelined (everything issued in one loop turn goes out in one write), and pub/sub.
//
// Guarantees: every command's callback runs exactly once — with the reply, or with an error when the
// connection fails or is closed first (then in issue order). The connection never reconnects by itself:
// on_down() says it is gone (once), and the owner makes a new AsyncClient. Replies are copied out of
// hiredis into Value (small: what the cluster asks for is strings, integers and flat arrays); a pub/sub
// message is handed over as views, valid during the call only.
//
// Liveness: TCP keepalive, plus what the owner checks with commands (a PING that does not come back in
// time: the owner calls close()). A subscribed connection takes no other commands (Redis's rule).
//
// Threading: construct, call and destroy on the io_context's thread only; callbacks run there.
// Ownership: the owner holds it by shared_ptr (the socket watcher keeps it alive during a hiredis call).
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "redis/redis_url.h"
#include "wire/result.h"

struct redisAsyncContext;

namespace siomq::redis {

// A reply, owned. Nested arrays deeper than one level are not kept (kind nested): nothing we send
// gets them back.
struct Value {
  enum class Kind { nil, string, integer, array, status, error, nested };
  Kind kind = Kind::nil;
  std::string text;  // string, status, error
  long long integer = 0;
  std::vector<Value> items;  // array (flat)
  bool is_ok() const { return kind == Kind::status && text == "OK"; }
};

class AsyncClient : public std::enable_shared_from_this<AsyncClient> {
 public:
  using Done = std::function<void(const Status&)>;
  using ReplyHandler = std::function<void(Result<Value>)>;
  using MessageHandler = std::function<void(std::string_view channel, std::string_view message)>;

  // Starts connecting at once; `ready` gets Ok after the AUTH, SELECT and CLIENT SETNAME (name) the
  // URL and name ask for, or why it failed (refused, timed out, AUTH rejected). It runs at most once;
  // a connection that was ready and fails later says so through on_down instead.
  static std::shared_ptr<AsyncClient> connect(boost::asio::io_context& io, const Url& url, std::string name,
                                              std::chrono::milliseconds timeout, Done ready);
  ~AsyncClient();
  AsyncClient(const AsyncClient&) = delete;
  AsyncClient& operator=(const AsyncClient&) = delete;

  // Called once when a ready connection goes away (not after close()).
  void on_down(std::function<void(const std::string& why)> f) { on_down_ = std::move(f); }
  bool ready() const { return ready_; }

  // Sends one command (binary-safe arguments). Not ready or gone: `h` gets an error at once (posted).
  void command(const std::vector<std::string>& args, ReplyHandler h);
  // SUBSCRIBE to `channels`; every message on them goes to `h`. `subscribed` gets Ok after Redis
  // confirmed the last one.
  void subscribe(const std::vector<std::string>& channels, MessageHandler h, Done subscribed);
  // Drops the connection: pending callbacks get errors, on_down is not called.
  void close();

 private:
  struct Watcher;
  AsyncClient(boost::asio::io_context& io, std::string name);
  static void on_connect(const redisAsyncContext* ac, int status);
  static void on_disconnect(const redisAsyncContext* ac, int status);
  static void on_reply(redisAsyncContext* ac, void* reply, void* privdata);
  static void on_message(redisAsyncContext* ac, void* reply, void* privdata);
  void start(const Url& url, std::chrono::milliseconds timeout);
  void handshake(const Url& url);
  void finish_ready(const Status& s);
  void gone(const std::string& why);
  bool send(const std::vector<std::string>& args, void (*fn)(redisAsyncContext*, void*, void*), void* privdata);

  boost::asio::io_context& io_;
  std::string name_;
  redisAsyncContext* ac_ = nullptr;  // null once hiredis freed it
  std::shared_ptr<Watcher> watcher_;
  Done ready_cb_;
  bool ready_ = false;
  bool closing_ = false;
  std::function<void(const std::string&)> on_down_;
  // Subscriptions: the handler outlives every message callback (hiredis keeps the pointer).
  std::unique_ptr<MessageHandler> message_handler_;
  Done subscribed_cb_;
  size_t unconfirmed_channels_ = 0;
  std::unique_ptr<boost::asio::steady_timer> connect_timer_;
};

}  // namespace siomq::redis
