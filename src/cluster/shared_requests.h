// The authorization requests (tyo-mq §7) a cluster's nodes share (§10): one JSON map in Redis,
// <c>:authreqs = {request_id: request}, each request in the reference's internal shape — the raw
// client_token, its hash, the requester's socket_id and node_id included — so that reference nodes and
// siomq nodes read and decide each other's requests during a rolling replacement. A decision is
// announced on <c>:authreq:decided as {node_id, request}; the node whose id the request carries tells
// its requester.
//
// SharedRequests is the document in memory: parse the text read from Redis, change it, write text().
// The caller runs each change inside a transaction (Link::change_document), so two nodes never lose each
// other's change; the reference's own read-modify-write has no such guard.
//
// Input from Redis is hostile like a client's: at most kMaxDocumentBytes, validated whole (js::validate:
// UTF-8, depth, linear time, no recursion) before it is parsed; an entry that is not a request of the
// expected shape is ignored by every reader and left as it is. Bounds on what is written: the pending
// caps (as on one node: kDefaultMaxPending or the configured limit, kMaxPendingPerRealm per realm, and
// here kMaxPendingBytesPerRealm); a request still pending kKeepDecidedMs after it was filed is dropped
// (the reference keeps it for ever), decided or superseded ones kKeepDecidedMs after their decision, or
// sooner, oldest first, when the document would pass kMaxEntries or kMaxDocumentBytes.
//
// Pure; any thread (one instance per thread).
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "auth/enrolment.h"
#include "wire/result.h"

namespace siomq::cluster {

inline constexpr size_t kMaxDocumentBytes = size_t{8} << 20;
// What one realm's pending requests may take of it (as written): one realm's requesters, or someone
// filing in its name, cannot fill the document for the others.
inline constexpr size_t kMaxPendingBytesPerRealm = size_t{512} << 10;
inline constexpr size_t kMaxEntries = 10'000;
inline constexpr int64_t kKeepDecidedMs = 24 * 3600 * 1000;

// What a node needs of one shared request: to check a manager's proof, add the approved token, tell
// the requester.
struct SharedRequest {
  std::string request_id, status, realm, role, client_id, client_name, client_token, socket_id, node_id;
  std::optional<std::string> decision_reason;
};

class SharedRequests {
 public:
  // The document as read (nullopt: the key does not exist yet). 503-class error when the text is not a
  // JSON object or too large: a node then refuses the operation rather than overwrite what it cannot read.
  static Result<SharedRequests> parse(const std::optional<std::string>& text);
  std::string text() const;

  // Files `r` (its id, realm, role, client fields and challenge response) as pending, from `socket_id`
  // on `node_id`, at `now_ms`. A pending request of the same realm and client_id is superseded. 429 at
  // the pending caps (`max_pending` 0: kDefaultMaxPending), 507 when the document is full of pending ones.
  Status file(const auth::AuthorizationRequest& r, const std::string& socket_id, const std::string& node_id,
              size_t max_pending, int64_t now_ms);
  // The oldest pending request (of `realm` when given) in the public shape (auth::public_request's
  // members); null when there is none.
  nlohmann::json next_public(const std::optional<std::string>& realm) const;
  // A pending request by id.
  std::optional<SharedRequest> pending(const std::string& request_id) const;
  // Decides a pending request (404 "Pending authorization request not found" otherwise): status,
  // decided_at, decision_reason and, approved, the role. Returns the whole request as stored (the note's
  // `request`) and its public shape.
  struct Decided {
    nlohmann::json stored, shown;
    SharedRequest request;
  };
  Result<Decided> decide(const std::string& request_id, bool approved, const std::string& role,
                         const std::optional<std::string>& reason, int64_t now_ms);
  // Drops every request of a removed realm.
  void remove_realm(const std::string& realm);

 private:
  void prune(int64_t now_ms);
  nlohmann::json doc_ = nlohmann::json::object();
};

// The public shape of a stored request (never the raw token nor where the requester is).
nlohmann::json public_shared_request(const nlohmann::json& stored);
// A request as the reference stores it, read back; nullopt when a member is missing or not a string.
std::optional<SharedRequest> read_shared_request(const nlohmann::json& stored);

// <c>:authreq:decided: {"node_id":N,"request":{...}}.
std::string encode_decision_note(const std::string& node_id, const nlohmann::json& request);
// The note's request, when the note is one (bounded and validated like the document) and not `own_node`'s.
std::optional<SharedRequest> decode_decision_note(std::string_view text, const std::string& own_node);

}  // namespace siomq::cluster
