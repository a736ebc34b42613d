// The bounds of the key directory (key_directory.h), set from the settings' `limits` block
// (docs/configuration.md, "E2EE directories"). A plain struct, so the settings reader needs no engine.
#pragma once

#include <cstddef>

namespace siomq::broker {

struct KeyDirectoryLimits {
  size_t max_keys_per_identity = 8;     // KEY_PUBLISH, per identity (the reference's cap): 429 beyond
  size_t max_one_time_prekeys = 100;    // a bundle's pool (the reference's cap): the oldest go beyond
  size_t max_entries_per_realm = 10000; // an identity's key set or its bundle is one entry: 507 beyond
  size_t max_bytes = size_t{64} << 20;  // every realm together, encoded entries + 256 each: 507 beyond
};

}  // namespace siomq::broker
