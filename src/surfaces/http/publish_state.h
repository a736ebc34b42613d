// The state HTTP publish keeps per server (internal to surfaces/http): options, the SSE history, tickets,
// stream counts per realm and per address, and the publish rate buckets per token.
//
// Threading: each part locks inside; the Context is thread-safe.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "auth/limits.h"
#include "net/http_connection.h"
#include "surfaces/http/http_caller.h"
#include "surfaces/http/http_publish.h"
#include "surfaces/http/http_target.h"
#include "surfaces/http/sse_history.h"
#include "surfaces/http/tickets.h"
#include "surfaces/tyo_mq/context.h"

namespace siomq::surfaces::http {

// The message and byte buckets of one publisher (a token, or an address when auth is off): HTTP has no
// socket, so §11.1's per-socket buckets are kept per token instead.
struct RateEntry {
  std::mutex mu;
  auth::TokenBucket messages, bytes;
  int64_t used_ms = 0;
};

struct PublishState {
  PublishState(std::shared_ptr<Context> c, HttpPublishOptions o, SseHistory& h)
      : ctx(std::move(c)), options(o), history(h), tickets(o.max_tickets) {}
  std::shared_ptr<Context> ctx;
  HttpPublishOptions options;
  SseHistory& history;  // the server's (it outlives the routes)
  TicketBook tickets;

  std::mutex streams_mu;
  std::map<std::string, size_t> streams_by_realm, streams_by_ip;

  std::mutex rates_mu;
  std::unordered_map<std::string, std::shared_ptr<RateEntry>> rates;
  // The entry of `key`, made on first use; past max_rate_keys the idle ones (a minute) are dropped.
  std::shared_ptr<RateEntry> rate_entry(const std::string& key, int64_t now_ms);
};

// Answers `status` with {ok:false, code:status, message} (and `allow` when given).
void answer_error(const std::shared_ptr<net::HttpConnection>& conn, const net::HttpRequest& req, int status,
                  std::string_view message, std::string_view allow = {});
void answer_json(const std::shared_ptr<net::HttpConnection>& conn, const net::HttpRequest& req, int status,
                 std::string body);

void serve_publish(const std::shared_ptr<PublishState>& state, const std::shared_ptr<net::HttpConnection>& conn,
                   net::HttpRequest& req, const HttpTarget& target);
void serve_ticket(const std::shared_ptr<PublishState>& state, const std::shared_ptr<net::HttpConnection>& conn,
                  net::HttpRequest& req, const HttpTarget& target);
void serve_events(const std::shared_ptr<PublishState>& state, const std::shared_ptr<net::HttpConnection>& conn,
                  net::HttpRequest& req, const HttpTarget& target);

}  // namespace siomq::surfaces::http
