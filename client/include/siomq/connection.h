// siomq::Connection: one Socket.IO connection to a siomq (or tyo-mq) server, carrying any number of
// namespaces, that reconnects by itself. The tyo-mq client (siomq/tyomq.h) and the bus client
// (siomq/bus.h) are built on it; use it directly for events neither of them has a call for.
//
// Guarantees
//   - Requests are answered exactly once: the server's ack, or an Error (errc::timeout after the
//     request's timeout, errc::disconnected when the connection dropped after it was sent — the server
//     may have done it —, errc::closed, errc::buffer_full, errc::refused).
//   - Emits made while disconnected wait (up to max_buffered_packets / max_buffered_bytes) and go out in
//     order after the reconnect, once every namespace is joined again and every rejoin hook (what the
//     tyo-mq and bus clients use to authenticate, register and subscribe again) has finished.
//   - The library never sends anything twice by itself: a request that was sent before a drop fails
//     with errc::disconnected rather than being sent again.
//
// Threading: every public call is thread-safe and returns at once; the work happens on the io thread
// (the Connection's own, or the io_context given to it), in the order the calls were made. Callbacks,
// handlers and hooks run on the io thread, one at a time: do not block in them, and do not wait there
// on a future of this library (it would wait for the thread that is waiting).
// Ownership: the Connection owns its io thread and its socket; destroying it closes the connection and
// joins the thread (do not destroy it from one of its own callbacks).
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <future>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "siomq/result.h"

namespace boost::asio {
class io_context;
}

namespace siomq {

using std::chrono::milliseconds;

// How the connection comes back after it drops: the delays grow from `initial_delay` by `multiplier`
// up to `max_delay`, each scaled by a random factor in [1 - jitter, 1] so that many clients of a
// restarted server do not come back at the same instant; the server URLs are tried in turn.
struct ReconnectPolicy {
  bool enabled = true;
  milliseconds initial_delay{100};
  milliseconds max_delay{5000};
  double multiplier = 2.0;
  double jitter = 0.5;
  int max_attempts = 0;  // attempts in a row before giving up (state closed); 0: never give up
};

// How a connection travels: WebSocket, falling back to HTTP long-polling when the upgrade is refused
// (a proxy that does not pass WebSocket) — the default —, or only one of them.
enum class Transport { websocket_then_polling, websocket, polling };

struct Options {
  // Servers, tried in turn: http://, https://, ws:// or wss://host[:port][/path] (path default /socket.io/).
  std::vector<std::string> urls{"http://127.0.0.1:17352"};
  Transport transport = Transport::websocket_then_polling;
  int eio = 4;                  // Engine.IO protocol: 4, or 3 for Socket.IO v2 servers
  std::string ca_file;          // https/wss: CA certificates (PEM) to verify the server with; empty: the system's
  milliseconds connect_timeout{10000};  // one attempt: TCP, TLS, WebSocket upgrade and Engine.IO open
  milliseconds request_timeout{10000};  // a request's default timeout
  ReconnectPolicy reconnect;
  // connect() fails when no server answers on the first round through `urls`; with this set it keeps
  // trying by the reconnect policy instead.
  bool retry_on_failed_connect = false;
  size_t max_buffered_packets = 10000;  // emits held while disconnected
  size_t max_buffered_bytes = 64 << 20;
  size_t max_message_bytes = 100 << 20;  // the largest message accepted from the server
};

enum class State {
  idle,          // not connected yet
  connecting,    // the first connect
  connected,     // every namespace joined and every rejoin hook done
  reconnecting,  // the connection dropped; trying again
  closed,        // close() was called, or reconnection gave up
};
const char* to_string(State state);

// An ack's arguments, or an event's arguments after its name: a JSON array as text, and the binary
// attachments its {"_placeholder":true,"num":i} objects refer to.
struct Reply {
  std::string json;
  std::vector<std::string> attachments;
};

using ReplyCallback = std::function<void(Result<Reply>)>;
using EventHandler = std::function<void(const Reply&)>;

// What a rejoin hook sends with: straight on the new connection, ahead of anything buffered.
class RejoinSender {
 public:
  virtual ~RejoinSender() = default;
  virtual void emit(std::string_view event, std::string_view args) = 0;
  virtual void request(std::string_view event, std::string_view args, ReplyCallback done) = 0;
  // Ends the hook. Until every hook of every namespace has called it, nothing buffered is sent.
  virtual void done() = 0;
};
using RejoinHook = std::function<void(std::shared_ptr<RejoinSender>)>;

class Connection {
 public:
  explicit Connection(Options options);  // runs its own io thread; does not connect yet
  // Runs on `io`, whose thread(s) the caller runs: then callbacks run there.
  Connection(Options options, boost::asio::io_context& io);
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // Connects to the first server that answers and joins the namespaces joined so far ("/" by default
  // when none was). Ready when connected (State::connected), or with errc::unreachable when no server
  // answered (see Options::retry_on_failed_connect), errc::refused when "/" refused the CONNECT.
  std::future<Status> connect();
  void connect(std::function<void(Status)> done);

  // Joins a namespace with a CONNECT payload (a JSON object, or empty), now if connected and again
  // after every reconnect. A namespace emitted on without being joined is joined then, without payload. Ready when joined, or errc::refused with the server's message: then that
  // namespace's requests fail with the same error, and it is not joined again.
  std::future<Status> join(std::string nsp, std::string auth = {});
  void join(std::string nsp, std::string auth, std::function<void(Status)> done);

  // Runs `hook` each time `nsp` is joined again after a reconnect, before anything buffered is sent.
  void on_rejoin(std::string nsp, RejoinHook hook);
  // Adds a handler called (io thread) on each change of state, with the reason for drops.
  void on_state(std::function<void(State, const std::string& reason)> handler);

  // Calls `handler` for every `event` received on `nsp`; returns an id for off().
  uint64_t on(std::string nsp, std::string event, EventHandler handler);
  void off(uint64_t id);

  // Sends ["event", args...] without asking for an ack. `args`: comma-separated JSON values (may be
  // empty); `attachments`: binary data they refer to. Fails at once with errc::closed or
  // errc::buffer_full; otherwise the emit is sent now or after the reconnect.
  Status emit(std::string_view nsp, std::string_view event, std::string_view args,
              std::vector<std::string> attachments = {});
  // The same, asking for an ack: `done` gets it (or an Error) exactly once. A timeout of 0 means the
  // Options' request_timeout.
  void request(std::string_view nsp, std::string_view event, std::string_view args,
               std::vector<std::string> attachments, milliseconds timeout, ReplyCallback done);
  std::future<Result<Reply>> request(std::string_view nsp, std::string_view event, std::string_view args,
                                     std::vector<std::string> attachments = {}, milliseconds timeout = {});

  // Leaves every namespace and closes; pending requests fail with errc::closed. Idempotent.
  void close();
  // close(), then waits for the io thread it runs to end, so that nothing of this connection runs once
  // it returns — not even a callback that holds its owner alive (a client façade calls it when it is
  // destroyed: its state may then be freed by that callback on the io thread, which must not outlive
  // the façade's caller, e.g. main). Does not wait when called on the io thread, or when the caller
  // runs the io_context. The connection is closed for good afterwards.
  void shutdown();

  State state() const;
  // The socket id the server gave on `nsp` ("" when not joined).
  std::string socket_id(const std::string& nsp = "/") const;
  // Runs `fn` on the io thread, after the calls made before it.
  void post(std::function<void()> fn);

 private:
  class Impl;
  std::shared_ptr<Impl> impl_;
};

// JSON text helpers for building arguments: `json_string("a\"b")` is "\"a\\\"b\"" (escaped as
// JSON.stringify escapes), and the placeholder object of attachment i.
std::string json_string(std::string_view s);
std::string attachment_placeholder(size_t i);

}  // namespace siomq
