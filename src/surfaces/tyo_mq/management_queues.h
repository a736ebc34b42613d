// The management commands that read the engine rather than the settings (§8.2): stats, and the
// dead-letter queue's dlq_list, dlq_discard and dlq_replay, answered from the durable queues' thread on
// a kept reply (Reply::keep), which holds nothing of the socket but its endpoint.
#pragma once

#include <nlohmann/json.hpp>

#include "surfaces/tyo_mq/management_call.h"

namespace siomq::store {
struct DeadRow;
}

namespace siomq::surfaces::management {

// The `stats` command's (and GET /api/stats') object: {realms:{<id>:{producers:{total,online},
// consumers:{total,online}, subscriptions}}, connections_current}. A realm's open SSE streams count as
// online consumers (http::Metrics::sse_streams).
nlohmann::json stats_json(Context& ctx);
// One DLQ entry as dlq_list (and GET /api/realms/{realm}/dlq) show it.
nlohmann::json dlq_entry(const store::DeadRow& dead);

void stats(const Call& call);
void dlq_list(const Call& call);
void dlq_discard(const Call& call);
void dlq_replay(const Call& call);

}  // namespace siomq::surfaces::management
