// The payloads of the E2EE directory requests (protocol §12): KEY_PUBLISH {identity, public_key, key_id,
// alg}, KEY_LOOKUP and PREKEY_TAKE {identity}, PREKEY_PUBLISH {identity, <bundle>} (the bundle's fields:
// broker/directory_values.h). Read from the request object's raw JSON without building a tree; every
// field is checked against its bound, and an error (code 400) names the field. Pure; any thread.
#pragma once

#include <string>
#include <string_view>

#include "broker/directory_values.h"
#include "wire/result.h"

namespace siomq::surfaces {

struct KeyPublishRequest {
  std::string identity;
  broker::PublicKey key;  // key_id "default" unless given; alg empty unless given
};

struct PrekeyPublishRequest {
  std::string identity;
  broker::PrekeyBundle bundle;
};

// `object` is the request object (request_object); the results own their bytes.
Result<KeyPublishRequest> parse_key_publish(std::string_view object);
Result<PrekeyPublishRequest> parse_prekey_publish(std::string_view object);
// KEY_LOOKUP, PREKEY_TAKE: the identity asked about.
Result<std::string> parse_identity(std::string_view object);

}  // namespace siomq::surfaces
