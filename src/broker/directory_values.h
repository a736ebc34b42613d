// The entries of the key directory (key_directory.h): an identity's published public keys and its
// Signal-style prekey bundle, the bounds on every field, and the JSON they are read from and stored as.
//
// The JSON of a bundle is the one tyo-mq clients send in PREKEY_PUBLISH (the reference's flat names):
//   {registration_id, device_id, identity_key, signed_prekey_id, signed_prekey, signed_prekey_sig,
//    kyber_prekey_id, kyber_prekey, kyber_prekey_sig, one_time_prekeys:[{id, key}], updated_at?}
// and a key set is stored as {keys:[{key_id, alg?, public_key, updated_at}]}. Key material is base64
// text (standard or URL-safe alphabet, optional '=' padding); ids are integers in [0, 2^32).
//
// Reading trusts nothing (a request, or a record from a damaged store): linear time, no recursion, every
// field checked against its bound. Pure functions; any thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <vector>

#include "wire/result.h"

namespace siomq::broker {

// One public key an identity published (KEY_PUBLISH).
struct PublicKey {
  std::string key_id;      // "default" unless given
  std::string alg;         // empty: not given
  std::string public_key;  // base64
  int64_t updated_ms = 0;  // Unix ms of the last publish
  bool operator==(const PublicKey&) const = default;
};

// One one-time prekey of a bundle's pool.
struct OneTimePrekey {
  uint64_t id = 0;
  std::string key;  // base64
  bool operator==(const OneTimePrekey&) const = default;
};

// A Signal prekey bundle (X3DH with the PQXDH Kyber prekey) and its pool of one-time prekeys, oldest first.
struct PrekeyBundle {
  uint64_t registration_id = 0;
  uint64_t device_id = 0;
  std::string identity_key;
  uint64_t signed_prekey_id = 0;
  std::string signed_prekey, signed_prekey_sig;
  uint64_t kyber_prekey_id = 0;
  std::string kyber_prekey, kyber_prekey_sig;
  std::deque<OneTimePrekey> one_time;
  int64_t updated_ms = 0;
  bool operator==(const PrekeyBundle&) const = default;
};

// Field bounds (characters; key material is ASCII, so bytes too).
inline constexpr size_t kMaxPublicKeyChars = 4096;   // KEY_PUBLISH public_key (the reference's cap)
inline constexpr size_t kMaxKeyIdChars = 128;        // KEY_PUBLISH key_id (the reference's cap)
inline constexpr size_t kMaxAlgChars = 64;
inline constexpr size_t kMaxIdentityBytes = 1024;    // a producer or consumer name
inline constexpr size_t kMaxPrekeyChars = 512;       // identity key, signed prekey, signatures, one-time prekeys
inline constexpr size_t kMaxKyberPrekeyChars = 4096; // a Kyber-1024 public key is 1,569 bytes: 2,092 characters
inline constexpr size_t kMaxOneTimePrekeysPerPublish = 100;
inline constexpr uint64_t kMaxPrekeyId = 0xFFFFFFFFu;

// Non-empty base64 text of at most `max` characters; the error names `field`.
Status check_base64(std::string_view text, size_t max, std::string_view field);
// Characters as JavaScript counts them (UTF-16 code units) of valid UTF-8 text.
size_t js_length(std::string_view utf8);

// Reads a bundle from a JSON object in the form above (unknown members are ignored, the last of
// duplicates wins). The Kyber prekey and its signature are required. Errors carry code 400 and name the
// field. `stored`: a stored record, whose updated_at is read too (a client's is ignored).
Result<PrekeyBundle> read_bundle(std::string_view object, bool stored);
std::string encode_bundle(const PrekeyBundle& bundle);
// The bundle's published members, as stored and as PREKEY_TAKE answers them: registration_id, device_id,
// identity_key, signed_prekey_id, signed_prekey, signed_prekey_sig, kyber_prekey_id, kyber_prekey,
// kyber_prekey_sig — each "name":value followed by a comma.
void append_bundle_fields(std::string& out, const PrekeyBundle& bundle);

// `keys` with `key` published: it replaces the key of the same key_id, else joins them; 429 when that
// would make more than `max_keys`.
Result<std::vector<PublicKey>> with_key(std::vector<PublicKey> keys, PublicKey key, size_t max_keys);

std::string encode_keys(const std::vector<PublicKey>& keys);
Result<std::vector<PublicKey>> decode_keys(std::string_view value);

}  // namespace siomq::broker
