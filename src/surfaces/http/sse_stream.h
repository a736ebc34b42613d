// One GET /sub/:realm/:event stream (tyo-mq §9) as the engine sees it: a broker::Endpoint bound as the
// consumer "__http_sse__:<stream id>" with a subscription to (TYO-MQ-ALL, event) in its realm, so it counts
// as a subscriber in routing and in the stats. It forwards only copies whose event equals its own exactly
// (no lowercasing, no topics), as frames; a copy already replayed from the history (same id) is skipped,
// so a resume crosses the replay boundary exactly once.
//
// Ownership: the broker holds it while it is subscribed; it holds its connection weakly.
// Threading: deliver / notify / when_sent / close from any thread post to the connection's worker;
// open() and the rest on that worker.
#pragma once

#include <boost/asio/steady_timer.hpp>

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <unordered_set>

#include "broker/broker.h"
#include "broker/endpoint.h"
#include "net/http_connection.h"
#include "surfaces/http/sse_history.h"

namespace siomq::surfaces::http {

struct SseStreamOptions {
  std::chrono::milliseconds keep_alive{25000};
  size_t max_pending_bytes = 1024 * 1024;  // a reader further behind than this is dropped
};

class SseStream : public broker::Endpoint, public std::enable_shared_from_this<SseStream> {
 public:
  SseStream(const std::shared_ptr<net::HttpConnection>& conn, std::string realm, std::string event,
            SseStreamOptions options);
  // Answers the request with the stream's head and `: ok`, subscribes, then replays the history after
  // `since` (when resuming). `on_end` runs once, on the worker, when the stream ends.
  void open(const net::HttpRequest& request, broker::Broker& broker, SseHistory& history,
            const std::optional<std::string>& since, std::function<void()> on_end);

  const std::string& socket_id() const override { return id_; }
  void deliver(const broker::Delivery& delivery) override;
  void notify(const broker::Presence&) override {}
  void when_sent(std::function<void(bool sent)> done) override;
  void close() override;

 private:
  void write(const std::string& id, const std::string& frame);
  void keep_alive();
  void ended(broker::Broker& broker);

  net::Worker& worker_;
  std::weak_ptr<net::HttpConnection> conn_;
  std::string id_, realm_, event_, consumer_, key_;
  SseStreamOptions options_;
  std::unordered_set<std::string> replayed_;  // ids sent from the history (at most its window)
  boost::asio::steady_timer timer_;
  bool open_ = false;
};

}  // namespace siomq::surfaces::http
