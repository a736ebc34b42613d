// The tyo-mq surface's periodic work: expired ephemeral realms are disposed of (checked every second)
// and idle names are evicted (§11.2), then realms left empty are forgotten.
#pragma once

#include "surfaces/tyo_mq/context.h"

namespace siomq::surfaces {

// Call it about once a second, always from the same thread: it keeps its clocks in `ctx` unlocked.
void housekeeping(Context& ctx);

}  // namespace siomq::surfaces
