#include "surfaces/console/console_requests.h"

#include "auth/auth_config.h"
#include "auth/hmac.h"
#include "broker/broker.h"
#include "surfaces/bus/fields.h"
#include "wire/json_spans.h"
#include "wire/socketio.h"

namespace siomq::surfaces::console {
namespace {

constexpr size_t kMaxField = 4096;

struct ConnectAuth {
  std::optional<std::string> token, realm;
  std::string proof;  // the raw object text, "" when absent
};

// The CONNECT auth object's members, read without recursion (json_spans); anything else is ignored.
ConnectAuth read_auth(std::string_view text) {
  ConnectAuth out;
  if (text.empty() || text.front() != '{') return out;
  auto members = json_spans::object_members(text);
  if (!members) return out;
  for (const auto& m : *members) {
    if (m.key == "proof" && !m.value.empty() && m.value.front() == '{' && m.value.size() <= kMaxField) out.proof = m.value;
    if (m.value.empty() || m.value.front() != '"') continue;
    auto v = json_spans::unescape(m.value);
    if (!v || v->empty() || v->size() > kMaxField) continue;
    if (m.key == "token") out.token = std::move(*v);
    if (m.key == "realm") out.realm = std::move(*v);
  }
  return out;
}

// Every admin token is compared, so the time taken says nothing of which one matched.
bool is_admin_token(const auth::AuthConfig& config, std::string_view token) {
  bool ok = false;
  for (const auto& t : config.tokens) {
    if (t.realm == broker::Broker::kMirrorRealm && t.role == "admin" && !t.token.empty())
      ok |= auth::equal_secrets(token, t.token);
  }
  return ok;
}

}  // namespace

std::optional<ConsoleGrant> console_grant(const auth::Snapshot& snap, std::string_view auth_json, auth::NonceCache& nonces,
                                          int64_t now_ms) {
  if (!snap.auth.enabled) return ConsoleGrant{true, {}, {}};
  ConnectAuth a = read_auth(auth_json);
  if (a.token) return is_admin_token(snap.auth, *a.token) ? std::optional(ConsoleGrant{true, {}, *a.token}) : std::nullopt;
  if (!a.realm || a.proof.empty() || *a.realm == broker::Broker::kMirrorRealm || auth::bad_realm_name(*a.realm))
    return std::nullopt;
  auto realm = snap.auth.realms.find(*a.realm);
  if (realm == snap.auth.realms.end() || !realm->second.manager_key || realm->second.manager_key->empty()) return std::nullopt;
  std::string body = "{\"realm\":";
  sio::append_json_string(body, *a.realm);
  body += "}";
  if (!auth::verify_proof(kConnectAction, body, a.proof, *realm->second.manager_key, now_ms, nonces)) return std::nullopt;
  return ConsoleGrant{false, *a.realm, *realm->second.manager_key};
}

bool still_granted(const auth::Snapshot& snap, const ConsoleGrant& grant) {
  if (grant.credential.empty()) return !snap.auth.enabled;  // granted while auth was off
  if (!snap.auth.enabled) return true;                     // auth switched off: everyone is an admin now
  if (grant.admin) return is_admin_token(snap.auth, grant.credential);
  auto realm = snap.auth.realms.find(grant.realm);
  return realm != snap.auth.realms.end() && realm->second.manager_key &&
         auth::equal_secrets(grant.credential, *realm->second.manager_key);
}

Result<std::optional<std::string>> read_watch(std::string_view args) {
  auto object = bus::request_object(args);
  if (!object) return object.error();
  auto members = json_spans::object_members(*object);
  if (!members) return members.error();
  std::optional<std::string> realm;
  for (const auto& m : *members) {
    if (m.key != "realm" || m.value == "null") continue;
    auto v = m.value.starts_with('"') ? json_spans::unescape(m.value) : Result<std::string>(Error{400, "not a string"});
    if (!v || v->empty() || auth::bad_realm_name(*v)) return Error{400, "realm: a realm name or null"};
    realm = std::move(*v);
  }
  return realm;
}

}  // namespace siomq::surfaces::console
