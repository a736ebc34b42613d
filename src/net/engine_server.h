// The Engine.IO server: answers requests under the Socket.IO path, opens sessions, keeps the registry
// that maps a session id to its worker, and runs each worker's heartbeat sweep.
#pragma once

#include <boost/asio/steady_timer.hpp>
#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "net/engine_request.h"
#include "net/http_connection.h"
#include "net/session_handler.h"
#include "net/transport_options.h"

namespace siomq::net {

class EngineSession;
class WorkerPool;

class EngineServer {
 public:
  using HandlerFactory = std::function<std::unique_ptr<SessionHandler>(EngineSession&)>;

  EngineServer(WorkerPool& pool, const TransportOptions& options, HandlerFactory factory);
  ~EngineServer();

  // The route for HttpRoutes: claims requests under the configured path. `console`: the request came to the
  // web console's port, and a session it opens is marked so (EngineSession::via_console).
  bool handle(const std::shared_ptr<HttpConnection>& conn, HttpRequest& request, bool console = false);
  // Closes the session named in `target`, whose POST body was too large.
  void payload_too_large(std::string_view target);

  std::shared_ptr<EngineSession> find(const std::string& sid);
  size_t session_count();
  // Sessions living on worker `index` now (any thread; for the metrics).
  size_t sessions_on(size_t index) const { return workers_[index].count.load(std::memory_order_relaxed); }
  // Starts the heartbeat sweeps (one per worker).
  void start();
  // Closes every session; returns once each worker has done so.
  void close_all(std::string_view reason);

  // Sessions closed as slow consumers since start; count_slow_consumer adds one and returns the total.
  uint64_t slow_consumers() const { return slow_consumers_.load(std::memory_order_relaxed); }
  uint64_t count_slow_consumer() { return slow_consumers_.fetch_add(1, std::memory_order_relaxed) + 1; }

  // Called by a session once it has closed.
  void forget(EngineSession& session);

  // Adds the CORS headers the reference sends on every Engine.IO response.
  static void add_cors(HttpResponse& res, std::string_view origin);
  static HttpResponse error_response(const HttpRequest& request, EngineError error);

 private:
  struct PerWorker {
    std::unordered_map<EngineSession*, std::shared_ptr<EngineSession>> sessions;
    std::unique_ptr<boost::asio::steady_timer> timer;
    std::atomic<size_t> count{0};  // sessions created on it and not yet forgotten; read by any thread
  };

  void on_session_request(const std::shared_ptr<HttpConnection>& conn, HttpRequest& request, const EngineRequest& r);
  std::shared_ptr<EngineSession> create(Worker& worker, int protocol, const std::string& remote, bool console);
  void sweep(size_t worker_index);
  std::chrono::milliseconds sweep_interval() const;

  WorkerPool& pool_;
  const TransportOptions& options_;
  HandlerFactory factory_;
  std::mutex mu_;
  // By sid, guarded by mu_. A key views its session's own sid (the value keeps the session, and so the
  // bytes, alive): no second copy of every sid.
  std::unordered_map<std::string_view, std::shared_ptr<EngineSession>> registry_;
  std::vector<PerWorker> workers_;  // workers_[i] is touched only by worker i
  std::atomic<uint64_t> slow_consumers_{0};
};

// A new random session or socket id: 15 random bytes in URL-safe base64 (20 characters).
std::string random_id();

}  // namespace siomq::net
