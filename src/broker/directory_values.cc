#include "broker/directory_values.h"

#include <algorithm>
#include <optional>
#include <tuple>
#include <utility>

#include "wire/json_spans.h"
#include "wire/json_text.h"
#include "wire/socketio.h"

namespace siomq::broker {
namespace {

Error bad(std::string message) { return make_error(std::move(message), 400); }

// The members of one object, looked up as JavaScript reads `obj.name` (the last duplicate wins).
class Members {
 public:
  static Result<Members> of(std::string_view object, std::string_view what) {
    auto m = json_spans::object_members(object);
    if (!m) return bad(std::string(what) + " must be an object");
    return Members(std::move(*m));
  }
  // The raw value; empty when absent.
  std::string_view raw(std::string_view name) const {
    for (auto it = members_.rbegin(); it != members_.rend(); ++it) {
      if (it->key == name) return it->value;
    }
    return {};
  }
  // A string member: nullopt when absent or null; an error for another type.
  Result<std::optional<std::string>> text(std::string_view name) const {
    std::string_view v = raw(name);
    if (v.empty() || v == "null") return std::optional<std::string>{};
    if (v.front() != '"') return bad(std::string(name) + " must be a string");
    auto s = json_spans::unescape(v);
    if (!s) return bad(std::string(name) + " is not a valid string");
    return std::optional<std::string>{std::move(*s)};
  }
  // Required base64 key material.
  Result<std::string> key(std::string_view name, size_t max) const {
    auto v = text(name);
    if (!v) return v.error();
    if (!*v) return bad(std::string(name) + " is required");
    if (auto s = check_base64(**v, max, name); !s) return s.error();
    return std::move(**v);
  }
  // An integer in [0, max]; 0 when absent or null.
  Result<uint64_t> integer(std::string_view name, uint64_t max) const {
    std::string_view v = raw(name);
    if (v.empty() || v == "null") return uint64_t{0};
    uint64_t n = 0;
    bool ok = !v.empty() && v.size() <= 16 && (v.size() == 1 || v.front() != '0');
    for (char c : v) {
      if (c < '0' || c > '9') ok = false;
      else n = n * 10 + static_cast<uint64_t>(c - '0');
    }
    if (!ok || n > max) return bad(std::string(name) + " must be an integer from 0 to " + std::to_string(max));
    return n;
  }

 private:
  explicit Members(std::vector<json_spans::Member> m) : members_(std::move(m)) {}
  std::vector<json_spans::Member> members_;
};

constexpr uint64_t kMaxTime = uint64_t{1} << 53;

// The pool of a bundle: at most kMaxOneTimePrekeysPerPublish {id, key}.
Result<std::deque<OneTimePrekey>> read_pool(std::string_view raw) {
  std::deque<OneTimePrekey> pool;
  if (raw.empty() || raw == "null") return pool;
  auto items = json_spans::array_elements(raw);
  if (!items) return bad("one_time_prekeys must be an array");
  if (items->size() > kMaxOneTimePrekeysPerPublish)
    return bad("one_time_prekeys holds more than " + std::to_string(kMaxOneTimePrekeysPerPublish) + " prekeys");
  for (std::string_view item : *items) {
    auto m = Members::of(item, "a one-time prekey");
    if (!m) return m.error();
    auto id = m->integer("id", kMaxPrekeyId);
    if (!id) return bad("one_time_prekeys: " + id.error().message);
    auto key = m->key("key", kMaxPrekeyChars);
    if (!key) return bad("one_time_prekeys: " + key.error().message);
    pool.push_back({*id, std::move(*key)});
  }
  return pool;
}

using json_text::append_member;

}  // namespace

Status check_base64(std::string_view text, size_t max, std::string_view field) {
  if (text.empty()) return bad(std::string(field) + " must not be empty");
  if (text.size() > max) return bad(std::string(field) + " exceeds " + std::to_string(max) + " characters");
  size_t body = text.size();
  while (body > 0 && text.size() - body < 2 && text[body - 1] == '=') --body;
  for (size_t i = 0; i < body; ++i) {
    char c = text[i];
    bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '+' || c == '/' ||
              c == '-' || c == '_';
    if (!ok) return bad(std::string(field) + " must be base64 text");
  }
  if (body == 0) return bad(std::string(field) + " must be base64 text");
  return Ok{};
}

size_t js_length(std::string_view utf8) {
  size_t n = 0;
  for (unsigned char c : utf8) {
    if ((c & 0xC0) != 0x80) ++n;  // a lead byte: one code point
    if (c >= 0xF0) ++n;           // outside the BMP: a surrogate pair
  }
  return n;
}

Result<PrekeyBundle> read_bundle(std::string_view object, bool stored) {
  auto m = Members::of(object, "the prekey bundle");
  if (!m) return m.error();
  PrekeyBundle b;
  // The Kyber prekey first: PQXDH is required, and a client missing it should learn that before anything else.
  for (auto [name, out, max] : {std::tuple{"kyber_prekey", &b.kyber_prekey, kMaxKyberPrekeyChars},
                                std::tuple{"kyber_prekey_sig", &b.kyber_prekey_sig, kMaxPrekeyChars},
                                std::tuple{"identity_key", &b.identity_key, kMaxPrekeyChars},
                                std::tuple{"signed_prekey", &b.signed_prekey, kMaxPrekeyChars},
                                std::tuple{"signed_prekey_sig", &b.signed_prekey_sig, kMaxPrekeyChars}}) {
    auto v = m->key(name, max);
    if (!v) {
      if (std::string_view(name).starts_with("kyber") && m->raw(name).empty())
        return bad(std::string(name) + " is required (PQXDH: the Kyber prekey and its signature)");
      return v.error();
    }
    *out = std::move(*v);
  }
  for (auto [name, out] : {std::pair{"registration_id", &b.registration_id}, std::pair{"device_id", &b.device_id},
                           std::pair{"signed_prekey_id", &b.signed_prekey_id},
                           std::pair{"kyber_prekey_id", &b.kyber_prekey_id}}) {
    auto v = m->integer(name, kMaxPrekeyId);
    if (!v) return v.error();
    *out = *v;
  }
  auto pool = read_pool(m->raw("one_time_prekeys"));
  if (!pool) return pool.error();
  b.one_time = std::move(*pool);
  if (stored) {
    auto at = m->integer("updated_at", kMaxTime);
    if (!at) return at.error();
    b.updated_ms = static_cast<int64_t>(*at);
  }
  return b;
}

void append_bundle_fields(std::string& out, const PrekeyBundle& b) {
  append_member(out, "registration_id", b.registration_id);
  append_member(out, "device_id", b.device_id);
  append_member(out, "identity_key", b.identity_key);
  append_member(out, "signed_prekey_id", b.signed_prekey_id);
  append_member(out, "signed_prekey", b.signed_prekey);
  append_member(out, "signed_prekey_sig", b.signed_prekey_sig);
  append_member(out, "kyber_prekey_id", b.kyber_prekey_id);
  append_member(out, "kyber_prekey", b.kyber_prekey);
  append_member(out, "kyber_prekey_sig", b.kyber_prekey_sig);
}

std::string encode_bundle(const PrekeyBundle& b) {
  std::string out = "{";
  append_bundle_fields(out, b);
  out.append("\"one_time_prekeys\":[");
  for (const auto& k : b.one_time) {
    out.append("{\"id\":" + std::to_string(k.id) + ",\"key\":");
    sio::append_json_string(out, k.key);
    out.append("},");
  }
  if (!b.one_time.empty()) out.pop_back();
  out.append("],\"updated_at\":" + std::to_string(b.updated_ms) + "}");
  return out;
}

Result<std::vector<PublicKey>> with_key(std::vector<PublicKey> keys, PublicKey key, size_t max_keys) {
  auto same = std::find_if(keys.begin(), keys.end(), [&](const PublicKey& k) { return k.key_id == key.key_id; });
  if (same != keys.end()) {
    *same = std::move(key);
    return keys;
  }
  if (keys.size() >= max_keys)
    return make_error("identity has " + std::to_string(max_keys) +
                          " published keys, the most allowed; re-publish one of their key_ids to replace it",
                      429);
  keys.push_back(std::move(key));
  return keys;
}

std::string encode_keys(const std::vector<PublicKey>& keys) {
  std::string out = "{\"keys\":[";
  for (const auto& k : keys) {
    out.push_back('{');
    append_member(out, "key_id", k.key_id);
    if (!k.alg.empty()) append_member(out, "alg", k.alg);
    append_member(out, "public_key", k.public_key);
    out.append("\"updated_at\":" + std::to_string(k.updated_ms) + "},");
  }
  if (!keys.empty()) out.pop_back();
  out.append("]}");
  return out;
}

Result<std::vector<PublicKey>> decode_keys(std::string_view value) {
  auto m = Members::of(value, "a key set");
  if (!m) return m.error();
  auto items = json_spans::array_elements(m->raw("keys"));
  if (!items) return bad("keys must be an array");
  std::vector<PublicKey> keys;
  for (std::string_view item : *items) {
    auto k = Members::of(item, "a key");
    if (!k) return k.error();
    auto id = k->text("key_id");
    auto alg = k->text("alg");
    auto pk = k->key("public_key", kMaxPublicKeyChars);
    auto at = k->integer("updated_at", kMaxTime);
    if (!id || !*id || !alg || !pk || !at) return bad("a stored key is malformed");
    if (id->value().empty() || js_length(**id) > kMaxKeyIdChars || (*alg && js_length(**alg) > kMaxAlgChars))
      return bad("a stored key is out of bounds");
    keys.push_back({std::move(**id), alg->value_or(""), std::move(*pk), static_cast<int64_t>(*at)});
  }
  return keys;
}

}  // namespace siomq::broker
