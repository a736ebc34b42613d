#include "cluster/shared_requests.h"

#include <algorithm>
#include <vector>

#include "auth/hmac.h"
#include "cluster/document_json.h"
#include "cluster/link.h"
#include "wire/js_json.h"

namespace siomq::cluster {
namespace {

using nlohmann::json;

// When the request was decided or superseded (ISO 8601 text, which sorts as time does), else filed.
std::string settled_at(const json& stored) {
  for (const char* key : {"decided_at", "superseded_at", "created_at"}) {
    if (const std::string* s = string_member(stored, key)) return *s;
  }
  return "";
}

bool is_pending(const json& stored) {
  const std::string* status = string_member(stored, "status");
  return status && *status == "pending" && read_shared_request(stored);
}

json value_or_null(const json& stored, const char* key) {
  auto it = stored.find(key);
  return it != stored.end() ? *it : json();
}

}  // namespace

std::optional<SharedRequest> read_shared_request(const json& stored) {
  if (!stored.is_object()) return std::nullopt;
  SharedRequest r;
  for (auto [key, out] : {std::pair{"request_id", &r.request_id}, std::pair{"status", &r.status},
                          std::pair{"realm", &r.realm}, std::pair{"role", &r.role}, std::pair{"client_id", &r.client_id},
                          std::pair{"client_name", &r.client_name}, std::pair{"client_token", &r.client_token}}) {
    const std::string* s = string_member(stored, key);
    if (!s) return std::nullopt;
    *out = *s;
  }
  // Where the requester is: null on a node without a cluster (the reference writes null then).
  for (auto [key, out] : {std::pair{"socket_id", &r.socket_id}, std::pair{"node_id", &r.node_id}}) {
    if (const std::string* s = string_member(stored, key)) *out = *s;
  }
  if (const std::string* reason = string_member(stored, "decision_reason")) r.decision_reason = *reason;
  return r;
}

json public_shared_request(const json& stored) {
  const std::string* token = string_member(stored, "client_token");
  return {{"request_id", value_or_null(stored, "request_id")},
          {"status", value_or_null(stored, "status")},
          {"realm", value_or_null(stored, "realm")},
          {"role", value_or_null(stored, "role")},
          {"client_id", value_or_null(stored, "client_id")},
          {"client_name", value_or_null(stored, "client_name")},
          {"client_token_hash", token ? json(auth::sha256_hex(*token)) : json()},
          {"challenge_response", value_or_null(stored, "challenge_response")},
          {"created_at", value_or_null(stored, "created_at")},
          {"decided_at", value_or_null(stored, "decided_at")},
          {"decision_reason", value_or_null(stored, "decision_reason")}};
}

Result<SharedRequests> SharedRequests::parse(const std::optional<std::string>& text) {
  auto doc = parse_document(text, kMaxDocumentBytes, "the cluster's authorization requests are");
  if (!doc) return doc.error();
  SharedRequests out;
  out.doc_ = std::move(*doc);
  return out;
}

std::string SharedRequests::text() const { return document_text(doc_); }

Status SharedRequests::file(const auth::AuthorizationRequest& r, const std::string& socket_id, const std::string& node_id,
                            size_t max_pending, int64_t now_ms) {
  prune(now_ms);
  const std::string now = js::iso_date(now_ms);
  size_t pending = 0, in_realm = 0, realm_bytes = 0;
  for (auto& [id, stored] : doc_.items()) {
    if (!is_pending(stored)) continue;
    if (stored["realm"] == r.realm && stored["client_id"] == r.client_id) {
      stored["status"] = "superseded";
      stored["superseded_at"] = now;
      continue;
    }
    ++pending;
    if (stored["realm"] == r.realm) {
      ++in_realm;
      realm_bytes += document_text(stored).size();
    }
  }
  if (pending >= (max_pending ? max_pending : auth::kDefaultMaxPending) || in_realm >= auth::kMaxPendingPerRealm)
    return make_error("Too many pending authorization requests", 429);
  json challenge = json::parse(r.challenge_response_json, nullptr, false);
  json entry = {{"request_id", r.request_id},
                {"status", "pending"},
                {"realm", r.realm},
                {"role", r.role},
                {"client_id", r.client_id},
                {"client_name", r.client_name},
                {"client_token", r.client_token},
                {"client_token_hash", auth::sha256_hex(r.client_token)},
                {"challenge_response", challenge.is_discarded() ? json() : std::move(challenge)},
                {"created_at", now},
                {"socket_id", socket_id},
                {"node_id", node_id}};
  // Room for it: the oldest settled requests go first; pending ones are never dropped.
  const size_t needed = document_text(entry).size() + r.request_id.size() + 8;
  if (realm_bytes + needed > kMaxPendingBytesPerRealm) return make_error("Too many pending authorization requests", 429);
  std::vector<std::pair<std::string, std::string>> settled;  // (settled_at, id)
  for (auto& [id, stored] : doc_.items()) {
    if (read_shared_request(stored) && !is_pending(stored)) settled.emplace_back(settled_at(stored), id);
  }
  std::sort(settled.begin(), settled.end());
  size_t bytes = text().size();
  for (const auto& [when, id] : settled) {
    if (bytes + needed <= kMaxDocumentBytes && doc_.size() < kMaxEntries) break;
    bytes -= std::min(bytes, document_text(doc_[id]).size() + id.size() + 6);
    doc_.erase(id);
  }
  if (bytes + needed > kMaxDocumentBytes || doc_.size() >= kMaxEntries)
    return make_error("the cluster's authorization requests are full", 507);
  doc_[r.request_id] = std::move(entry);
  return Ok{};
}

json SharedRequests::next_public(const std::optional<std::string>& realm) const {
  const json* oldest = nullptr;
  for (const auto& [id, stored] : doc_.items()) {
    if (!is_pending(stored) || (realm && stored["realm"] != *realm)) continue;
    // The reference orders by created_at as text; ISO 8601 text sorts as time does.
    if (!oldest || settled_at(stored) < settled_at(*oldest)) oldest = &stored;
  }
  return oldest ? public_shared_request(*oldest) : json();
}

std::optional<SharedRequest> SharedRequests::pending(const std::string& request_id) const {
  auto it = doc_.find(request_id);
  if (it == doc_.end() || !is_pending(*it)) return std::nullopt;
  return read_shared_request(*it);
}

Result<SharedRequests::Decided> SharedRequests::decide(const std::string& request_id, bool approved, const std::string& role,
                                                       const std::optional<std::string>& reason, int64_t now_ms) {
  auto it = doc_.find(request_id);
  if (it == doc_.end() || !is_pending(*it)) return make_error("Pending authorization request not found", 404);
  json& stored = *it;
  stored["status"] = approved ? "approved" : "rejected";
  stored["decided_at"] = js::iso_date(now_ms);
  stored["decision_reason"] = reason ? json(*reason) : json();
  if (approved) stored["role"] = role;
  return Decided{stored, public_shared_request(stored), *read_shared_request(stored)};
}

void SharedRequests::remove_realm(const std::string& realm) {
  for (auto it = doc_.begin(); it != doc_.end();) {
    const std::string* r = it->is_object() ? string_member(*it, "realm") : nullptr;
    it = r && *r == realm ? doc_.erase(it) : std::next(it);
  }
}

void SharedRequests::prune(int64_t now_ms) {
  const std::string cutoff = js::iso_date(now_ms - kKeepDecidedMs);
  for (auto it = doc_.begin(); it != doc_.end();) {
    // Settled: a day after the decision; still pending: a day after it was filed.
    bool expired = read_shared_request(*it) && settled_at(*it) < cutoff;
    it = expired ? doc_.erase(it) : std::next(it);
  }
}

std::string encode_decision_note(const std::string& node_id, const json& request) {
  return document_text(json{{"node_id", node_id}, {"request", request}});
}

std::optional<SharedRequest> decode_decision_note(std::string_view text, const std::string& own_node) {
  if (text.size() > kMaxNoteBytes || !js::validate(text)) return std::nullopt;
  json note = json::parse(text, nullptr, false);
  if (!note.is_object()) return std::nullopt;
  const std::string* by = string_member(note, "node_id");
  if (by && *by == own_node) return std::nullopt;  // our own, already handled
  auto request = note.find("request");
  if (request == note.end()) return std::nullopt;
  return read_shared_request(*request);
}

}  // namespace siomq::cluster
