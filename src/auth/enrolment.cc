#include "auth/enrolment.h"

#include <nlohmann/json.hpp>


#include "auth/hmac.h"
#include "wire/js_json.h"

namespace siomq::auth {

nlohmann::json public_request(const AuthorizationRequest& r) {
  nlohmann::json out = {{"request_id", r.request_id},
                        {"status", r.status},
                        {"realm", r.realm},
                        {"role", r.role},
                        {"client_id", r.client_id},
                        {"client_name", r.client_name},
                        {"client_token_hash", sha256_hex(r.client_token)},
                        {"challenge_response", nlohmann::json::parse(r.challenge_response_json, nullptr, false)},
                        {"created_at", js::iso_date(r.created_at_ms)},
                        {"decided_at", nullptr},
                        {"decision_reason", nullptr}};
  if (out["challenge_response"].is_discarded()) out["challenge_response"] = nullptr;
  if (r.decided_at_ms) out["decided_at"] = js::iso_date(*r.decided_at_ms);
  if (r.decision_reason) out["decision_reason"] = *r.decision_reason;
  return out;
}

Result<AuthorizationRequest> Enrolment::submit(AuthorizationRequest request, size_t max_pending, int64_t now_ms) {
  std::lock_guard lock(mu_);
  requests_.remove_if([&](const AuthorizationRequest& r) {
    return r.realm == request.realm && r.client_id == request.client_id;  // superseded
  });
  size_t in_realm = 0;
  for (const auto& r : requests_) in_realm += r.realm == request.realm;
  if (requests_.size() >= (max_pending ? max_pending : kDefaultMaxPending) || in_realm >= kMaxPendingPerRealm)
    return make_error("Too many pending authorization requests", 429);
  request.status = "pending";
  request.created_at_ms = now_ms;
  requests_.push_back(std::move(request));
  return requests_.back();
}

std::optional<AuthorizationRequest> Enrolment::next(const std::optional<std::string>& realm) {
  std::lock_guard lock(mu_);
  for (const auto& r : requests_) {
    if (!realm || r.realm == *realm) return r;
  }
  return std::nullopt;
}

std::optional<AuthorizationRequest> Enrolment::pending(const std::string& request_id) {
  std::lock_guard lock(mu_);
  for (const auto& r : requests_) {
    if (r.request_id == request_id) return r;
  }
  return std::nullopt;
}

Result<AuthorizationRequest> Enrolment::decide(const std::string& request_id, bool approved, const std::string& role,
                                               std::optional<std::string> reason, int64_t now_ms) {
  std::lock_guard lock(mu_);
  for (auto it = requests_.begin(); it != requests_.end(); ++it) {
    if (it->request_id != request_id) continue;
    AuthorizationRequest r = std::move(*it);
    requests_.erase(it);
    r.status = approved ? "approved" : "rejected";
    if (approved) r.role = role;
    r.decided_at_ms = now_ms;
    r.decision_reason = std::move(reason);
    return r;
  }
  return make_error("Pending authorization request not found", 404);
}

void Enrolment::withdraw(const std::string& request_id) {
  std::lock_guard lock(mu_);
  requests_.remove_if([&](const AuthorizationRequest& r) { return r.request_id == request_id; });
}

void Enrolment::remove_realm(const std::string& realm) {
  std::lock_guard lock(mu_);
  requests_.remove_if([&](const AuthorizationRequest& r) { return r.realm == realm; });
}

std::vector<AuthorizationRequest> Enrolment::pending_list(const std::optional<std::string>& realm, size_t limit) {
  std::lock_guard lock(mu_);
  std::vector<AuthorizationRequest> out;
  for (const auto& r : requests_) {
    if (out.size() == limit) break;
    if (!realm || r.realm == *realm) out.push_back(r);
  }
  return out;
}

size_t Enrolment::pending_count() {
  std::lock_guard lock(mu_);
  return requests_.size();
}

}  // namespace siomq::auth
