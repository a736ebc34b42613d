// set_persistence (§8.2): the live store moves (everything stored is copied, the writer switches), then
// the settings file says so. Answered when the move is done, always on AUTH_MANAGEMENT_RESULT without an
// ack; one move at a time (409 while one runs), 501 when the process gave no way to move the store.
// The move's callback holds the Context (shared) and a kept reply until it runs, on any thread.
#pragma once

#include "surfaces/tyo_mq/management_call.h"

namespace siomq::surfaces::management {

void set_persistence(const Call& call);

}  // namespace siomq::surfaces::management
