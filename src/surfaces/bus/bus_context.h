// What every handler of the bus surface reaches: the tyo-mq surface's Context (the engine, the live
// settings, the sessions — the bus shares realms, auth and limits with tyo-mq) and the bus's own options.
//
// Ownership: one BusContext per server, made by register_bus and held (shared_ptr) by every bus handler.
// Threading: as Context; `options` is immutable after start.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

#include "auth/limits.h"
#include "broker/streams.h"
#include "surfaces/refusal_pace.h"
#include "surfaces/bus/surface.h"
#include "surfaces/tyo_mq/context.h"

namespace siomq::surfaces::bus {

struct BusContext : std::enable_shared_from_this<BusContext> {
  std::shared_ptr<Context> tyo;
  BusOptions options;
  // The streams engine (owned by the server; outlives the handlers' use of it); null: none.
  broker::Streams* streams = nullptr;
  // Refused "/control" CONNECTs, paced per remote address (control.cc).
  RefusalPace refusals;
};

// What a request wants to do, for the role check (docs/protocol-notes.md, "bus roles").
enum class Need { publish, subscribe, any };

class Answer;

// The realm a bus request on "/" works in, after the auth rules (§3, §8.18: with auth on, only a grant
// earned with a credential counts, else 401; a producer grant may not subscribe and a consumer grant may
// not publish, 403) and the session's rate buckets (429, `cost` bytes). nullopt: refused and answered.
std::optional<std::string> admit(BusContext& ctx, Session& session, Need need, size_t cost, const Answer& answer);

}  // namespace siomq::surfaces::bus
