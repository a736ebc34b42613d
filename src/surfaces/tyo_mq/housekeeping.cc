#include "surfaces/tyo_mq/housekeeping.h"

#include <spdlog/spdlog.h>

#include "surfaces/tyo_mq/realm_disposal.h"

namespace siomq::surfaces {
namespace {

// Expired realms are looked for every second (the reference sweeps every 60 s): a realm ends within a
// second of its expires_at.
constexpr int64_t kEphemeralSweepMs = 1000;

}  // namespace

void housekeeping(Context& ctx) {
  const int64_t now = steady_ms();
  auto snap = ctx.settings.snapshot();
  if (!ctx.last_ephemeral_sweep_ms || now - ctx.last_ephemeral_sweep_ms >= kEphemeralSweepMs) {
    ctx.last_ephemeral_sweep_ms = now;
    const int64_t wall = unix_ms();
    for (const auto& [name, cfg] : snap->auth.realms) {
      if (name == "*" || name == "default" || !cfg.expires_at_ms || *cfg.expires_at_ms > wall) continue;
      spdlog::info("realm '{}' expired", name);
      if (auto d = dispose_realm(ctx, name, false); !d) spdlog::error("expiring realm '{}': {}", name, d.error().message);
    }
  }
  const auth::IdleEviction& idle = snap->idle;
  if (now - ctx.last_idle_sweep_ms >= idle.interval_ms) {
    ctx.last_idle_sweep_ms = now;
    size_t forgotten = 0;
    for (const auto& name : idle.enabled ? ctx.broker.realm_names() : std::vector<std::string>{})
      forgotten += ctx.broker.with_realm(name, [&](broker::RealmRegistry& r) { return r.evict_idle(now, idle.ttl_ms); });
    if (forgotten) spdlog::info("idle eviction: {} names offline for over {} ms forgotten", forgotten, idle.ttl_ms);
    // Realms left with nothing in them go too, eviction on or off: made-up realm names cannot pile up.
    if (size_t gone = ctx.broker.reclaim_empty_realms()) spdlog::info("{} empty realms forgotten", gone);
  }
}

}  // namespace siomq::surfaces
