#include "auth/jwt.h"

#include <openssl/crypto.h>


#include "auth/hmac.h"
#include "wire/base64.h"
#include "wire/durations.h"
#include "wire/js_json.h"
#include "wire/json_spans.h"

namespace siomq::auth {
namespace {

Error refused(std::string why) { return make_error("JWT: " + std::move(why), 401); }

std::string base64url(std::string_view bytes) {
  std::string s = base64::encode(bytes);
  for (char& c : s) c = c == '+' ? '-' : c == '/' ? '_' : c;
  while (!s.empty() && s.back() == '=') s.pop_back();
  return s;
}

std::optional<std::string> from_base64url(std::string_view text) {
  std::string s(text);
  for (char& c : s) {
    if (c == '+' || c == '/') return std::nullopt;
    c = c == '-' ? '+' : c == '_' ? '/' : c;
  }
  while (s.size() % 4) s.push_back('=');
  return base64::decode(s);
}

struct Parts {
  std::string_view header, payload, signature;
};

std::optional<Parts> split(std::string_view token) {
  size_t a = token.find('.');
  if (a == std::string_view::npos) return std::nullopt;
  size_t b = token.find('.', a + 1);
  if (b == std::string_view::npos || token.find('.', b + 1) != std::string_view::npos) return std::nullopt;
  return Parts{token.substr(0, a), token.substr(a + 1, b - a - 1), token.substr(b + 1)};
}

// The value of `name` in a JSON object (the last duplicate), or empty.
std::string_view member(const std::vector<json_spans::Member>& members, std::string_view name) {
  std::string_view out;
  for (const auto& m : members) {
    if (m.key == name) out = m.value;
  }
  return out;
}

}  // namespace

std::string sign_jwt(std::string_view payload_json, std::string_view secret) {
  std::string head = base64url(R"({"alg":"HS256","typ":"JWT"})") + "." + base64url(payload_json);
  return head + "." + base64url(hmac_sha256(secret, head));
}

std::optional<std::string> jwt_realm_hint(std::string_view token) {
  auto parts = split(token);
  if (!parts) return std::nullopt;
  auto payload = from_base64url(parts->payload);
  if (!payload || !js::validate(*payload)) return std::nullopt;  // unsigned text: read only when it is JSON
  auto members = json_spans::object_members(*payload);
  if (!members) return std::nullopt;
  std::string_view realm = member(*members, "realm");
  if (realm.empty() || realm.front() != '"') return std::nullopt;
  auto text = json_spans::unescape(realm);
  if (!text || text->empty()) return std::nullopt;
  return *text;
}

Result<JwtGrant> verify_jwt(std::string_view token, std::string_view secret, int64_t now_s) {
  auto parts = split(token);
  if (!parts) return refused("not three dot-separated parts");
  auto header = from_base64url(parts->header);
  auto header_members = header ? json_spans::object_members(*header) : Result<std::vector<json_spans::Member>>(make_error(""));
  if (!header_members) return refused("the header is not base64url JSON");
  if (member(*header_members, "alg") != "\"HS256\"") return refused("alg must be HS256");
  // The unpadded base64url text is compared, as the reference does: a padded signature fails.
  std::string expected =
      base64url(hmac_sha256(secret, token.substr(0, parts->header.size() + 1 + parts->payload.size())));
  if (parts->signature.size() != expected.size() ||
      CRYPTO_memcmp(parts->signature.data(), expected.data(), expected.size()) != 0)
    return refused("bad signature");
  auto payload = from_base64url(parts->payload);
  if (payload && !js::validate(*payload)) return refused("the payload is not base64url JSON");
  auto members = payload ? json_spans::object_members(*payload) : Result<std::vector<json_spans::Member>>(make_error(""));
  if (!members) return refused("the payload is not base64url JSON");
  std::string_view exp = member(*members, "exp"), nbf = member(*members, "nbf");
  if (!exp.empty() && exp != "null") {
    auto e = durations::number(exp);
    if (!e || *e <= static_cast<double>(now_s)) return refused("expired");
  }
  if (!nbf.empty() && nbf != "null") {
    auto n = durations::number(nbf);
    if (!n || *n > static_cast<double>(now_s)) return refused("not valid yet");
  }
  JwtGrant grant;
  for (auto [name, out] : {std::pair{"realm", &grant.realm}, std::pair{"role", &grant.role}}) {
    std::string_view v = member(*members, name);
    auto text = !v.empty() && v.front() == '"' ? json_spans::unescape(v) : Result<std::string>(make_error(""));
    if (!text || text->empty()) return refused(std::string("the '") + name + "' claim is missing");
    *out = std::move(*text);
  }
  return grant;
}

}  // namespace siomq::auth
