#include "surfaces/tyo_mq/e2ee_requests.h"

#include <optional>
#include <utility>

#include "wire/json_spans.h"

namespace siomq::surfaces {
namespace {

Error bad(std::string message) { return make_error(std::move(message), 400); }

// A string member; nullopt when absent, null or empty (JavaScript's falsy: the default applies).
Result<std::optional<std::string>> text(const std::vector<json_spans::Member>& members, std::string_view name) {
  std::string_view v = json_spans::last_member(members, name);
  if (v.empty() || v == "null" || v == "\"\"") return std::optional<std::string>{};
  if (v.front() != '"') return bad(std::string(name) + " must be a string");
  auto s = json_spans::unescape(v);
  if (!s) return bad(std::string(name) + " is not a valid string");
  return std::optional<std::string>{std::move(*s)};
}

Result<std::vector<json_spans::Member>> members_of(std::string_view object) {
  auto m = json_spans::object_members(object);
  if (!m) return bad("the payload must be an object");
  return std::move(*m);
}

Result<std::string> identity_of(const std::vector<json_spans::Member>& members) {
  auto id = text(members, "identity");
  if (!id) return id.error();
  if (!*id) return bad("identity is required");
  if ((*id)->size() > broker::kMaxIdentityBytes)
    return bad("identity exceeds " + std::to_string(broker::kMaxIdentityBytes) + " bytes");
  return std::move(**id);
}

}  // namespace

Result<KeyPublishRequest> parse_key_publish(std::string_view object) {
  auto m = members_of(object);
  if (!m) return m.error();
  auto identity = identity_of(*m);
  if (!identity) return identity.error();
  KeyPublishRequest r{std::move(*identity), {}};
  auto key_id = text(*m, "key_id");
  if (!key_id) return key_id.error();
  r.key.key_id = key_id->value_or("default");
  if (broker::js_length(r.key.key_id) > broker::kMaxKeyIdChars)
    return bad("key_id exceeds " + std::to_string(broker::kMaxKeyIdChars) + " characters");
  auto alg = text(*m, "alg");
  if (!alg) return alg.error();
  r.key.alg = alg->value_or("");
  if (broker::js_length(r.key.alg) > broker::kMaxAlgChars)
    return bad("alg exceeds " + std::to_string(broker::kMaxAlgChars) + " characters");
  auto pk = text(*m, "public_key");
  if (!pk) return pk.error();
  if (!*pk) return bad("public_key is required");
  if (auto s = broker::check_base64(**pk, broker::kMaxPublicKeyChars, "public_key"); !s) return s.error();
  r.key.public_key = std::move(**pk);
  return r;
}

Result<PrekeyPublishRequest> parse_prekey_publish(std::string_view object) {
  auto m = members_of(object);
  if (!m) return m.error();
  auto identity = identity_of(*m);
  if (!identity) return identity.error();
  auto bundle = broker::read_bundle(object, false);  // its time is set by the directory, never by a client
  if (!bundle) return bundle.error();
  return PrekeyPublishRequest{std::move(*identity), std::move(*bundle)};
}

Result<std::string> parse_identity(std::string_view object) {
  auto m = members_of(object);
  if (!m) return m.error();
  return identity_of(*m);
}

}  // namespace siomq::surfaces
