// The management commands that read the engine rather than the settings (§8.2): stats, and the
// dead-letter queue's dlq_list, dlq_discard and dlq_replay, answered from the durable queues' thread on
// a kept reply (Reply::keep), which holds nothing of the socket but its endpoint.
#pragma once

#include "surfaces/tyo_mq/management_call.h"

namespace siomq::surfaces::management {

void stats(const Call& call);
void dlq_list(const Call& call);
void dlq_discard(const Call& call);
void dlq_replay(const Call& call);

}  // namespace siomq::surfaces::management
