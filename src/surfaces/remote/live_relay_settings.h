// The relay settings of the live settings document, rebuilt when the document changes (a management
// command, SIGHUP, a changed file: within the second the server takes to notice), so `remote.*` rules
// and the configured namespaces apply without a restart. Each version is parsed once; a relayed event
// costs one atomic load and a pointer compare while nothing changes.
//
// The document was vetted by the settings validator (server/settings.cc runs parse_relay_settings on
// every version before it goes live), so parsing here does not fail; if it ever did, the last good
// settings stay.
//
// Thread-safe. Owns nothing but its cache; the LiveSettings it reads must outlive it.
#pragma once

#include <memory>
#include <mutex>

#include "auth/live_settings.h"
#include "surfaces/remote/relay_settings.h"

namespace siomq::remote {

class LiveRelaySettings {
 public:
  explicit LiveRelaySettings(auth::LiveSettings& settings);

  // The settings of the live document. The pointer stays valid as long as it is held.
  std::shared_ptr<const RelaySettings> current();

 private:
  auth::LiveSettings& settings_;
  std::mutex mu_;
  // The snapshot the shared value was parsed for (held, so its address is never reused meanwhile).
  std::shared_ptr<const auth::Snapshot> parsed_for_;
  std::shared_ptr<const RelaySettings> value_;
};

}  // namespace siomq::remote
