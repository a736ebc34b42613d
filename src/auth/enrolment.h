// Authorization requests of tyo-mq §7: a client asks to be enrolled into a realm, a manager polls
// for the oldest pending request and decides. Kept in memory, pending ones only: a superseded request
// is dropped when its successor is filed and a decided one once it is decided (nothing reads them
// later), so what an anonymous client can make the server hold is bounded by the pending caps —
// kDefaultMaxPending for the server (unless limits set max_pending_authorization_requests) and
// kMaxPendingPerRealm per realm, so that one realm's requests cannot crowd out another's. Thread-safe.
#pragma once

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "wire/result.h"

namespace siomq::auth {

struct AuthorizationRequest {
  std::string request_id;
  std::string status = "pending";  // pending, approved, rejected, superseded
  std::string realm, role, client_id, client_name, client_token;
  std::string challenge_response_json = "null";  // as the client sent it
  int64_t created_at_ms = 0;
  std::optional<int64_t> decided_at_ms;
  std::optional<std::string> decision_reason;
  // Tells the submitting client of the decision (an event and its JSON payload). It holds the client
  // weakly: once it is gone this does nothing. Empty: nobody to tell.
  std::function<void(std::string_view event, std::string_view payload)> tell_requester;
};

// The public shape: the token only as its SHA-256 (client_token_hash), times as ISO 8601.
nlohmann::json public_request(const AuthorizationRequest& r);

inline constexpr size_t kDefaultMaxPending = 1000;
inline constexpr size_t kMaxPendingPerRealm = 100;

class Enrolment {
 public:
  // Files a request (the older pending one of the same realm and client_id is superseded: dropped).
  // `max_pending` 0 means kDefaultMaxPending; at that limit, or at kMaxPendingPerRealm in the realm: 429.
  Result<AuthorizationRequest> submit(AuthorizationRequest request, size_t max_pending, int64_t now_ms);
  // The oldest pending request, of `realm` when given; it stays pending.
  std::optional<AuthorizationRequest> next(const std::optional<std::string>& realm);
  // A pending request by id.
  std::optional<AuthorizationRequest> pending(const std::string& request_id);
  // Decides a pending request (404 "Pending authorization request not found" otherwise).
  Result<AuthorizationRequest> decide(const std::string& request_id, bool approved, const std::string& role,
                                      std::optional<std::string> reason, int64_t now_ms);
  // Drops a pending request without a decision (its filing failed elsewhere).
  void withdraw(const std::string& request_id);
  // A removed realm's requests go with it.
  void remove_realm(const std::string& realm);
  size_t pending_count();
  // The pending requests, oldest first (of `realm` when given; at most `limit`), for the web console.
  std::vector<AuthorizationRequest> pending_list(const std::optional<std::string>& realm, size_t limit);

 private:
  std::mutex mu_;
  std::list<AuthorizationRequest> requests_;  // pending, in submission order
};

}  // namespace siomq::auth
