#include "surfaces/http/api_request.h"

#include <nlohmann/json.hpp>

#include "net/http_request.h"
#include "wire/js_json.h"

namespace siomq::surfaces::http {
namespace {

bool blank(char c) { return c == ' ' || c == '\t'; }

Error bad_request(std::string message) { return make_error(std::move(message), 400); }

}  // namespace

std::optional<std::vector<std::string_view>> path_segments(std::string_view target) {
  if (target.empty() || target.front() != '/') return std::nullopt;
  size_t end = target.find_first_of("?#");
  std::string_view path = target.substr(1, end == std::string_view::npos ? std::string_view::npos : end - 1);
  std::vector<std::string_view> out;
  for (;;) {
    if (out.size() == kMaxPathSegments) return std::nullopt;
    size_t slash = path.find('/');
    out.push_back(path.substr(0, slash));
    if (slash == std::string_view::npos) break;
    path.remove_prefix(slash + 1);
  }
  return out;
}

std::optional<std::string> decode_segment(std::string_view segment) {
  auto out = net::percent_decode(segment, false);
  if (!out) return std::nullopt;
  for (char c : *out) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) return std::nullopt;
  }
  return out;
}

std::optional<std::string_view> bearer_token(std::string_view authorization) {
  constexpr std::string_view scheme = "bearer";
  if (authorization.size() <= scheme.size()) return std::nullopt;
  for (size_t i = 0; i < scheme.size(); ++i) {
    char c = authorization[i];
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    if (c != scheme[i]) return std::nullopt;
  }
  std::string_view rest = authorization.substr(scheme.size());
  if (!blank(rest.front())) return std::nullopt;
  while (!rest.empty() && blank(rest.front())) rest.remove_prefix(1);
  while (!rest.empty() && blank(rest.back())) rest.remove_suffix(1);
  if (rest.empty()) return std::nullopt;
  return rest;
}

Result<RealmRequest> parse_realm_request(std::string_view body) {
  if (body.size() > kMaxRealmRequestBody) return bad_request("request body too large (at most 64 KiB)");
  // Validated first (iteratively, with the packets' depth limit) so that only well-formed, shallow JSON
  // reaches the tree parser.
  if (!js::validate(body)) return bad_request("request body must be valid JSON");
  nlohmann::json doc = nlohmann::json::parse(body, nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) return bad_request("request body must be a JSON object");
  RealmRequest r;
  auto realm = doc.find("realm");
  if (realm == doc.end() || !realm->is_string() || realm->get_ref<const std::string&>().empty())
    return bad_request("realm is required (a non-empty string)");
  r.realm = realm->get<std::string>();
  auto key = doc.find("manager_key");
  if (key == doc.end() || !key->is_string() || key->get_ref<const std::string&>().empty())
    return bad_request("manager_key is required (a non-empty string)");
  r.manager_key = key->get<std::string>();
  if (auto e = doc.find("ephemeral"); e != doc.end() && !e->is_null()) {
    if (!e->is_boolean()) return bad_request("ephemeral must be a boolean");
    r.ephemeral = e->get<bool>();
  }
  if (auto t = doc.find("ttl"); t != doc.end() && !t->is_null()) {
    if (!(t->is_string() || (t->is_number() && t->get<double>() > 0)))
      return bad_request("ttl must be a positive duration such as 3600 or \"12h\"");
    r.ttl = *t;
  }
  return r;
}

}  // namespace siomq::surfaces::http
