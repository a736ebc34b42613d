// ContentsBuilder: turns the records a backend reads at load into Contents. It decodes each record by
// its family's codec and checks that the record is the one its key names; what it refuses comes back
// as the reason, for the backend to move the record to the quarantine. finish() puts every family in
// key order (a backend may read them in any order: redis's HSCAN has none). Used by the file and redis
// backends, on the thread that loads; it keeps no reference to the bytes it is given.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "store/backend.h"
#include "store/family.h"

namespace siomq::store {

class ContentsBuilder {
 public:
  // Adds the record stored under `key` (the family's own key, without a backend's prefix); the reason
  // when it cannot be read.
  std::optional<std::string> add(Family family, std::string_view key, std::string_view value);
  // Counts a record moved to the quarantine; returns the count so far. A backend names the first
  // kQuarantineWarnings in the log at start-up and only counts the rest.
  static constexpr uint64_t kQuarantineWarnings = 20;
  uint64_t note_quarantined() { return ++contents_.quarantined; }
  uint64_t quarantined() const { return contents_.quarantined; }
  Contents finish() &&;

 private:
  Contents contents_;
};

}  // namespace siomq::store
