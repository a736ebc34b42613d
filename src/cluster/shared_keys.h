// The E2EE public-key directory a cluster's nodes share (tyo-mq §10): one JSON document in Redis,
// <c>:e2eekeys = {realm: {identity: [{key_id, alg, public_key, updated_at}]}} (updated_at as ISO 8601,
// as KEY_LOOKUP answers it), and the note <c>:e2eekeys:changed = {node_id, realm, identity} after each
// change. KEY_PUBLISH changes the document in a transaction (Link::change_document) and then this node's
// KeyDirectory; the other nodes, told by the note, copy that identity's keys into theirs, and copy the
// whole document after each (re)connection to Redis.
//
// Input from Redis is hostile: at most kMaxKeysDocumentBytes, validated whole before it is parsed; a key
// that breaks a bound of broker/directory_values.h is skipped, an identity with more keys than a node
// holds keeps the first ones. Pure; any thread (one instance per thread).
#pragma once

#include <nlohmann/json.hpp>

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "broker/directory_values.h"
#include "broker/key_directory_limits.h"
#include "wire/result.h"

namespace siomq::cluster {

inline constexpr size_t kMaxKeysDocumentBytes = size_t{64} << 20;

class SharedKeys {
 public:
  // The document as read (nullopt: none yet); 503-class error when it is not a JSON object or too large.
  static Result<SharedKeys> parse(const std::optional<std::string>& text);
  std::string text() const;

  // The keys of `identity` in `realm` that pass the bounds (at most `max_keys`).
  std::vector<broker::PublicKey> keys(const std::string& realm, const std::string& identity, size_t max_keys) const;
  // Publishes `key` for `identity` (replacing its key_id); 429 past the limits' keys an identity, 507 past
  // their identities a realm or when the document would pass kMaxKeysDocumentBytes — checked here, in the
  // transaction, so that what the cluster holds stays within what every node holds. Returns the
  // identity's keys.
  Result<std::vector<broker::PublicKey>> publish(const std::string& realm, const std::string& identity,
                                                 broker::PublicKey key, const broker::KeyDirectoryLimits& limits);
  void remove_realm(const std::string& realm);
  // Every identity of every realm, with its keys (identities without a valid key are skipped).
  void for_each(size_t max_keys,
                const std::function<void(const std::string& realm, const std::string& identity,
                                         std::vector<broker::PublicKey> keys)>& f) const;

 private:
  nlohmann::json doc_ = nlohmann::json::object();
};

struct KeysNote {
  std::string node_id, realm, identity;
};
std::string encode_keys_note(const KeysNote& note);
// nullopt when the text is not such a note.
std::optional<KeysNote> decode_keys_note(std::string_view text);

}  // namespace siomq::cluster
