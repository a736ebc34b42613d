#include "auth/authentication.h"

#include "auth/hmac.h"
#include "auth/jwt.h"

namespace siomq::auth {
namespace {

AuthOutcome refused(int code, std::string message) {
  AuthOutcome o;
  o.kind = AuthOutcome::Kind::refused;
  o.code = code;
  o.message = std::move(message);
  return o;
}

AuthOutcome granted(std::string realm, std::string role) {
  AuthOutcome o;
  o.kind = AuthOutcome::Kind::granted;
  o.grant = Grant{std::move(realm), std::move(role), false};
  return o;
}

bool plain_role(std::string_view role) { return role == "producer" || role == "consumer" || role == "both"; }

// A realm a client named without a credential: "*" never, a malformed name never.
std::optional<AuthOutcome> refuse_declared(std::string_view realm) {
  if (realm == kAllRealms) return refused(403, "Realm '*' requires an admin credential");
  if (auto why = bad_realm_name(realm)) return refused(400, "Invalid realm name: " + *why);
  return std::nullopt;
}

// A grant a token carried (a JWT's claims, a static token): its realm must be a valid name, or "*"
// for role admin; its role one of the five.
AuthOutcome checked(AuthOutcome o) {
  if (o.kind != AuthOutcome::Kind::granted) return o;
  const Grant& g = o.grant;
  if (!known_role(g.role)) return refused(401, "Invalid authentication token");
  if (g.realm == kAllRealms ? g.role != "admin" : bad_realm_name(g.realm).has_value())
    return refused(401, "Invalid authentication token");
  return o;
}

}  // namespace

Result<Grant> external_grant(const ExternalCheck& check, std::string realm, std::string role) {
  if (!known_role(role)) return make_error("the role '" + role + "' is not one of the five roles");
  if (realm == kAllRealms) {
    if (check.scope == ExternalCheck::Scope::global && role == "admin") return Grant{std::move(realm), std::move(role), false};
    return make_error("only the global validator grants realm '*', and only role admin");
  }
  if (auto why = bad_realm_name(realm)) return make_error(*why);
  if (check.scope == ExternalCheck::Scope::realm && realm != check.scope_realm)
    return make_error("a realm's validator grants its own realm only");
  if (check.scope == ExternalCheck::Scope::prefix && !realm.starts_with(check.scope_realm))
    return make_error("outside the validator's prefix '" + check.scope_realm + "'");
  return Grant{std::move(realm), std::move(role), false};
}

AuthOutcome check_token(const AuthConfig& config, std::string_view token, const std::optional<std::string>& declared_realm,
                        int64_t now_s) {
  // 2. The realm's own JWT key, found through the unverified realm claim.
  auto hint = jwt_realm_hint(token);
  if (hint) {
    if (const RealmConfig* r = config.realm(*hint); r && r->manager_key && !r->manager_key->empty()) {
      // A realm's key speaks for that realm only.
      if (auto g = verify_jwt(token, *r->manager_key, now_s); g && g->realm == *hint) return checked(granted(g->realm, g->role));
    }
  }
  // 3. The global secret.
  if (!config.jwt_secret.empty()) {
    if (auto g = verify_jwt(token, config.jwt_secret, now_s)) return checked(granted(g->realm, g->role));
  }
  // 4. Static tokens.
  for (const auto& t : config.tokens) {
    if (equal_secrets(token, t.token)) return checked(granted(t.realm, t.role));
  }
  // 5. An external validator: the realm's own, the longest matching prefix, the global one.
  std::optional<std::string> realm = declared_realm ? declared_realm : hint;
  AuthOutcome ask;
  ask.kind = AuthOutcome::Kind::ask_external;
  ask.external.realm = realm;
  if (realm) {
    if (const RealmConfig* r = config.realm(*realm); r && !r->auth_url.empty()) {
      ask.external.url = r->auth_url;
      ask.external.secret = r->auth_secret;
      ask.external.scope = ExternalCheck::Scope::realm;
      ask.external.scope_realm = *realm;
      return ask;
    }
    const ExternalValidator* best = nullptr;
    for (const auto& v : config.external_validators) {
      if (realm->starts_with(v.realm_prefix) && (!best || v.realm_prefix.size() > best->realm_prefix.size())) best = &v;
    }
    if (best) {
      ask.external.url = best->auth_url;
      ask.external.secret = best->auth_secret;
      ask.external.scope = ExternalCheck::Scope::prefix;
      ask.external.scope_realm = best->realm_prefix;
      return ask;
    }
  }
  if (!config.auth_url.empty()) {
    ask.external.url = config.auth_url;
    ask.external.secret = config.auth_secret;
    return ask;
  }
  return refused(401, "Invalid authentication token");
}

AuthOutcome authenticate(const AuthConfig& config, const AuthRequest& request, const std::optional<Grant>& current,
                         int64_t now_s) {
  // 1.
  if (!config.enabled) return granted("default", "both");
  // 2. An implicit grant from the gate does not count (§0 row 9).
  if (current && !current->implicit) return refused(403, "Socket is already authenticated");
  const std::string requested = request.role.value_or("");
  if (!request.token) {
    // 4.
    if (requested == "manager") return refused(401, "Manager role requires manual authorization");
    if (request.realm) {
      if (auto no = refuse_declared(*request.realm)) return *no;
    }
    // 5.
    if (request.realm && !config.auth_required(*request.realm))
      return granted(*request.realm, plain_role(requested) ? requested : "both");
    // 6.
    if (request.role || request.has_key) {
      std::string role = plain_role(requested) ? requested : "both";
      std::string realm = request.realm.value_or("default");
      if ((role == "consumer" || role == "both") && config.key_required(realm)) {
        const RealmConfig* r = config.realm(realm);
        if (!request.key || !r || !r->key || !equal_secrets(*request.key, *r->key))
          return refused(401, "Realm '" + realm + "' requires a valid pre-shared key");
      } else if ((role == "consumer" || role == "both") && !config.anonymous_consumers_allowed(realm)) {
        return refused(401, "Realm '" + realm + "' requires authentication for consumers");
      }
      if ((role == "producer" || role == "both") && config.acceptance_required(realm))
        return refused(403, "Producer must be accepted into realm '" + realm + "'");
      return granted(realm, role);
    }
    // 7.
    return refused(401, "Missing authentication token");
  }
  // 8. The token's realm wins over the declared one; a requested role is ignored.
  return check_token(config, *request.token, request.realm, now_s);
}

GateOutcome gate(const AuthConfig& config, const std::optional<Grant>& current, const std::optional<std::string>& pending_realm,
                 std::string_view event, std::initializer_list<std::string_view> roles) {
  GateOutcome out;
  if (!config.enabled) {
    out.allowed = true;
    return out;
  }
  if (!current) {
    std::string realm = pending_realm.value_or("default");
    auto only = [&](std::string_view role) { return roles.size() == 1 && *roles.begin() == role; };
    if (auto no = refuse_declared(realm)) {
      out.code = no->code;
      out.message = no->message;
      return out;
    }
    if (!config.auth_required(realm)) out.new_grant = Grant{realm, "both", true};
    else if (only("consumer") && !config.key_required(realm) && config.anonymous_consumers_allowed(realm))
      out.new_grant = Grant{realm, "consumer", true};
    else if (only("producer") && !config.acceptance_required(realm)) out.new_grant = Grant{realm, "producer", true};
    if (out.new_grant) {
      out.allowed = true;
      return out;
    }
    out.code = 401;
    out.message = "Authentication required before " + std::string(event);
    return out;
  }
  // Open realms do not enforce roles.
  if (!config.auth_required(current->realm) || role_allows(current->role, roles)) {
    out.allowed = true;
    return out;
  }
  out.code = 403;
  out.message = "Role '" + current->role + "' is not allowed to send " + std::string(event);
  return out;
}

}  // namespace siomq::auth
