// Op: one change to the store, as the engine hands it to the writer (writer.h) and the writer to a
// backend. An op names a record family, the record's key within it (the family's header says how a key
// is made) and, for a put, the record's encoding. Each family's header has the constructors the engine
// uses (store::put(row), store::erase_row(seq), …); an op owns its bytes.
#pragma once

#include <cstdint>
#include <string>

#include "store/family.h"

namespace siomq::store {

struct Op {
  enum class Kind : uint8_t {
    put,    // stores `value` under the key, replacing what was there
    erase,  // deletes the key (nothing to do when absent); `value` is empty
    // Moves a record the engine cannot use aside: `value` (its encoding) is kept in the quarantine
    // (family.h) and the record is deleted.
    quarantine,
  };
  Family family;
  Kind kind;
  std::string key;
  std::string value;
};

}  // namespace siomq::store
