#include "auth/enrolment.h"

#include <nlohmann/json.hpp>


#include "auth/hmac.h"
#include "wire/js_json.h"

namespace siomq::auth {
namespace {

constexpr int64_t kKeepDecidedMs = 3'600'000;

}  // namespace

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
  prune(now_ms);
  size_t pending = 0;
  for (auto& r : requests_) {
    if (r.status != "pending") continue;
    if (r.realm == request.realm && r.client_id == request.client_id) {
      r.status = "superseded";
      r.decided_at_ms = now_ms;
      continue;
    }
    ++pending;
  }
  if (max_pending && pending >= max_pending) return make_error("Too many pending authorization requests", 429);
  request.status = "pending";
  request.created_at_ms = now_ms;
  requests_.push_back(std::move(request));
  return requests_.back();
}

std::optional<AuthorizationRequest> Enrolment::next(const std::optional<std::string>& realm) {
  std::lock_guard lock(mu_);
  for (const auto& r : requests_) {
    if (r.status == "pending" && (!realm || r.realm == *realm)) return r;
  }
  return std::nullopt;
}

std::optional<AuthorizationRequest> Enrolment::pending(const std::string& request_id) {
  std::lock_guard lock(mu_);
  for (const auto& r : requests_) {
    if (r.request_id == request_id && r.status == "pending") return r;
  }
  return std::nullopt;
}

Result<AuthorizationRequest> Enrolment::decide(const std::string& request_id, bool approved, const std::string& role,
                                               std::optional<std::string> reason, int64_t now_ms) {
  std::lock_guard lock(mu_);
  for (auto& r : requests_) {
    if (r.request_id != request_id || r.status != "pending") continue;
    r.status = approved ? "approved" : "rejected";
    if (approved) r.role = role;
    r.decided_at_ms = now_ms;
    r.decision_reason = std::move(reason);
    return r;
  }
  return make_error("Pending authorization request not found", 404);
}

void Enrolment::remove_realm(const std::string& realm) {
  std::lock_guard lock(mu_);
  requests_.remove_if([&](const AuthorizationRequest& r) { return r.realm == realm; });
}

size_t Enrolment::pending_count() {
  std::lock_guard lock(mu_);
  size_t n = 0;
  for (const auto& r : requests_) n += r.status == "pending";
  return n;
}

void Enrolment::prune(int64_t now_ms) {
  requests_.remove_if([&](const AuthorizationRequest& r) {
    return r.status != "pending" && r.decided_at_ms && now_ms - *r.decided_at_ms > kKeepDecidedMs;
  });
}

}  // namespace siomq::auth
