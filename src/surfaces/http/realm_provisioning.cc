#include "surfaces/http/realm_provisioning.h"

#include <spdlog/spdlog.h>

#include "auth/hmac.h"
#include "surfaces/client_address.h"
#include "surfaces/http/api_request.h"
#include "surfaces/http/metrics.h"
#include "surfaces/tyo_mq/context.h"
#include "surfaces/tyo_mq/management_settings.h"
#include "wire/clock.h"
#include "wire/log_text.h"

namespace siomq::surfaces::http {
namespace {

namespace beast_http = boost::beast::http;
using nlohmann::json;

constexpr int64_t kHourMs = 3'600'000;

// The management token the request carries, compared with every configured one (SHA-256 digests,
// constant time); null when it carries none of them.
const auth::ManagementToken* management_token(const auth::Snapshot& snap, const net::HttpRequest& request) {
  auto token = bearer_token(request[beast_http::field::authorization]);
  if (!token) return nullptr;
  const auth::ManagementToken* found = nullptr;
  for (const auto& m : snap.auth.management_tokens) {
    if (!m.token.empty() && auth::equal_secrets(*token, m.token) && !found) found = &m;
  }
  return found;
}

bool within_prefix(const std::string& realm, const std::string& prefix) {
  return !prefix.empty() && realm.size() > prefix.size() && realm.starts_with(prefix) && realm != "*" &&
         realm != "default";
}

// Whether a management token owning `realm`'s name forces it to be ephemeral.
bool forced_ephemeral(const auth::Snapshot& snap, const std::string& realm) {
  for (const auto& m : snap.auth.management_tokens) {
    if (m.ephemeral_only && realm.starts_with(m.realm_prefix)) return true;
  }
  return false;
}

// What the 200 says of the realm after the change.
struct Provisioned {
  bool created = false;
  bool ephemeral = false;
  json expires_at;
};

// The change of the settings document: add_realm (and set_realm_lifetime) for a new realm,
// set_realm_manager_key for an existing one.
Status provision(const RealmRequest& r, const auth::Snapshot& snap, json& doc, Provisioned& out) {
  management::Outcome outcome;
  const json* realms = doc.contains("auth") && doc["auth"].is_object() && doc["auth"].contains("realms")
                           ? &doc["auth"]["realms"]
                           : nullptr;
  out.created = !(realms && realms->is_object() && realms->contains(r.realm));
  if (!out.created) {
    auto s = management::set_realm_manager_key({{"realm", r.realm}, {"manager_key", r.manager_key}}, doc, outcome);
    if (!s) return s;
  } else {
    auto s = management::add_realm({{"realm", r.realm}, {"manager_key", r.manager_key}, {"required", true}}, doc, outcome);
    if (!s) return s;
    if (r.ephemeral.value_or(false) || r.ttl || forced_ephemeral(snap, r.realm)) {
      json lifetime = {{"realm", r.realm}};
      if (r.ephemeral) lifetime["ephemeral"] = *r.ephemeral;
      if (r.ttl) lifetime["ttl"] = *r.ttl;
      s = management::set_realm_lifetime(lifetime, doc, outcome, snap, true);
      if (!s) return s;
    }
  }
  const json& cfg = doc["auth"]["realms"][r.realm];
  out.ephemeral = cfg.value("ephemeral", false) || cfg.value("temporary", false);
  out.expires_at = cfg.contains("expires_at") ? cfg["expires_at"] : json();
  return Ok{};
}

}  // namespace

void RealmProvisioning::handle(ApiCall& c) {
  const auth::Snapshot& snap = c.snap;
  auto fail = [&](int code, std::string_view message) { c.conn->respond(error_response(c.request, code, message)); };
  if (!snap.auth.enabled || snap.auth.management_tokens.empty()) return fail(404, "not found");
  const auth::ManagementToken* token = management_token(snap, c.request);
  if (!token) return fail(401, "management token required");
  auto r = parse_realm_request(c.request.body());
  if (!r) return fail(400, r.error().message);
  if (!within_prefix(r->realm, token->realm_prefix)) return fail(403, "realm outside managed prefix");
  if (r->ttl) {
    if (auto ttl = management::realm_duration(*r->ttl, "ttl"); !ttl) return fail(400, ttl.error().message);
  }
  const double per_hour = snap.limits.enabled ? snap.limits.values.realms_per_hour_per_ip : 0;
  if (per_hour > 0) {
    std::string address = client_address(c.conn->remote_address(), c.request["X-Forwarded-For"], snap.limits.trust_proxy);
    if (int64_t wait = take_allowance(address, per_hour, steady_ms())) {
      process_metrics().rate_limited("realms_per_hour_per_ip");
      auto res = json_response(c.request, beast_http::status::too_many_requests,
                               {{"ok", false},
                                {"code", 429},
                                {"message", "rate limited: realms_per_hour_per_ip"},
                                {"reason", "realms_per_hour_per_ip"},
                                {"retry_after", wait}});
      res.set(beast_http::field::retry_after, std::to_string(wait));
      return c.conn->respond(std::move(res));
    }
  }
  Provisioned done;
  auto s = ctx_->settings.update([&](json& doc) { return provision(*r, snap, doc, done); });
  if (!s) return fail(s.error().code ? s.error().code : 500, s.error().message);
  spdlog::info("http api: realm {} {} by a management token for '{}'", log_text(r->realm),
               done.created ? "created" : "given a new manager key", log_text(token->realm_prefix));
  c.conn->respond(json_response(c.request, beast_http::status::ok,
                                {{"ok", true},
                                 {"realm", r->realm},
                                 {"created", done.created},
                                 {"manager_key_configured", true},
                                 {"ephemeral", done.ephemeral},
                                 {"expires_at", done.expires_at}}));
}

int64_t RealmProvisioning::take_allowance(const std::string& address, double per_hour, int64_t now_ms) {
  std::lock_guard lock(mu_);
  if (allowances_.size() >= kMaxTrackedAddresses && !allowances_.contains(address)) {
    // An allowance unused for an hour is full again, the same as a fresh one: it can be forgotten.
    std::erase_if(allowances_, [&](const auto& a) { return now_ms - a.second.last_ms >= kHourMs; });
    if (allowances_.size() >= kMaxTrackedAddresses) return 60;
  }
  Allowance& a = allowances_[address];
  a.last_ms = now_ms;
  return a.bucket.take(1, per_hour / 3600.0, per_hour, now_ms);
}

}  // namespace siomq::surfaces::http
