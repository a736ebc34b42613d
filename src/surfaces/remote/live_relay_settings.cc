#include "surfaces/remote/live_relay_settings.h"

#include <spdlog/spdlog.h>

#include <exception>

namespace siomq::remote {

LiveRelaySettings::LiveRelaySettings(auth::LiveSettings& settings) : settings_(settings) {}

std::shared_ptr<const RelaySettings> LiveRelaySettings::current() {
  struct Cache {
    const LiveRelaySettings* owner = nullptr;
    const auth::Snapshot* key = nullptr;
    std::shared_ptr<const auth::Snapshot> hold;  // keeps `key`'s address from being reused
    std::shared_ptr<const RelaySettings> value;
  };
  thread_local Cache cache;
  const auth::Snapshot* now = &settings_.current();
  if (cache.owner == this && cache.key == now) return cache.value;

  std::lock_guard lock(mu_);
  auto snap = settings_.snapshot();
  if (parsed_for_ != snap || !value_) {
    try {
      value_ = std::make_shared<const RelaySettings>(parse_relay_settings(settings_.document()));
    } catch (const std::exception& e) {
      spdlog::error("relay settings: keeping the last good ones: {}", e.what());
      if (!value_) value_ = std::make_shared<const RelaySettings>(parse_relay_settings(nlohmann::json::object()));
    }
    parsed_for_ = snap;
  }
  cache = Cache{this, snap.get(), snap, value_};
  return value_;
}

}  // namespace siomq::remote
