#include "cluster/shared_keys.h"

#include "cluster/document_json.h"
#include "cluster/link.h"
#include "wire/js_json.h"

namespace siomq::cluster {
namespace {

using nlohmann::json;

// One key as stored, checked against the bounds a client's KEY_PUBLISH is held to.
std::optional<broker::PublicKey> read_key(const json& stored) {
  if (!stored.is_object()) return std::nullopt;
  const std::string* key_id = string_member(stored, "key_id");
  const std::string* public_key = string_member(stored, "public_key");
  const std::string* updated = string_member(stored, "updated_at");
  if (!key_id || key_id->empty() || broker::js_length(*key_id) > broker::kMaxKeyIdChars || !public_key ||
      !broker::check_base64(*public_key, broker::kMaxPublicKeyChars, "public_key"))
    return std::nullopt;
  broker::PublicKey k;
  k.key_id = *key_id;
  k.public_key = *public_key;
  if (const std::string* alg = string_member(stored, "alg")) {
    if (alg->size() > broker::kMaxAlgChars) return std::nullopt;
    k.alg = *alg;
  }
  auto ms = updated ? js::parse_iso_date(*updated) : std::nullopt;
  k.updated_ms = ms ? *ms : 0;
  return k;
}

json stored_key(const broker::PublicKey& k) {
  json out = {{"key_id", k.key_id}, {"public_key", k.public_key}, {"updated_at", js::iso_date(k.updated_ms)}};
  if (!k.alg.empty()) out["alg"] = k.alg;
  return out;
}

std::vector<broker::PublicKey> read_keys(const json& list, size_t max_keys) {
  std::vector<broker::PublicKey> keys;
  if (!list.is_array()) return keys;
  for (const auto& stored : list) {
    if (keys.size() >= max_keys) break;
    if (auto k = read_key(stored)) keys.push_back(std::move(*k));
  }
  return keys;
}

}  // namespace

Result<SharedKeys> SharedKeys::parse(const std::optional<std::string>& text) {
  auto doc = parse_document(text, kMaxKeysDocumentBytes, "the cluster's key directory is");
  if (!doc) return doc.error();
  SharedKeys out;
  out.doc_ = std::move(*doc);
  return out;
}

std::string SharedKeys::text() const { return document_text(doc_); }

std::vector<broker::PublicKey> SharedKeys::keys(const std::string& realm, const std::string& identity, size_t max_keys) const {
  auto r = doc_.find(realm);
  if (r == doc_.end() || !r->is_object()) return {};
  auto i = r->find(identity);
  return i == r->end() ? std::vector<broker::PublicKey>{} : read_keys(*i, max_keys);
}

Result<std::vector<broker::PublicKey>> SharedKeys::publish(const std::string& realm, const std::string& identity,
                                                           broker::PublicKey key, const broker::KeyDirectoryLimits& limits) {
  auto published = broker::with_key(keys(realm, identity, limits.max_keys_per_identity), std::move(key),
                                     limits.max_keys_per_identity);
  if (!published) return published.error();
  json list = json::array();
  for (const auto& k : *published) list.push_back(stored_key(k));
  auto r = doc_.find(realm);
  const bool new_identity = r == doc_.end() || !r->is_object() || !r->contains(identity);
  if (new_identity && r != doc_.end() && r->is_object() && r->size() >= limits.max_entries_per_realm)
    return make_error("the realm's key directory is full", 507);
  const size_t before = r != doc_.end() && r->is_object() && r->contains(identity) ? document_text((*r)[identity]).size() : 0;
  if (text().size() - before + document_text(list).size() + identity.size() + realm.size() + 16 > kMaxKeysDocumentBytes)
    return make_error("the cluster's key directory is full", 507);
  json& slot = doc_[realm];
  if (!slot.is_object()) slot = json::object();  // a realm entry that was not one is replaced
  slot[identity] = std::move(list);
  return published;
}

void SharedKeys::remove_realm(const std::string& realm) { doc_.erase(realm); }

void SharedKeys::for_each(size_t max_keys,
                          const std::function<void(const std::string&, const std::string&, std::vector<broker::PublicKey>)>& f) const {
  for (const auto& [realm, identities] : doc_.items()) {
    if (!identities.is_object()) continue;
    for (const auto& [identity, list] : identities.items()) {
      auto keys = read_keys(list, max_keys);
      if (!keys.empty()) f(realm, identity, std::move(keys));
    }
  }
}

std::string encode_keys_note(const KeysNote& note) {
  return document_text(json{{"node_id", note.node_id}, {"realm", note.realm}, {"identity", note.identity}});
}

std::optional<KeysNote> decode_keys_note(std::string_view text) {
  auto note = parse_note(text, kMaxNoteBytes);
  if (!note) return std::nullopt;
  const std::string* node = string_member(*note, "node_id");
  const std::string* realm = string_member(*note, "realm");
  const std::string* identity = string_member(*note, "identity");
  if (!node || !realm || !identity) return std::nullopt;
  return KeysNote{*node, *realm, *identity};
}

}  // namespace siomq::cluster
