// What the web console shows, gathered once a second for one signed-in session: a set of keyed JSON
// values ("overview", "realm/<name>", "detail", "enrolment", "settings"; docs/console.md lists their
// shapes), which the /console namespace compares with what it sent last and sends as a delta.
//
// Scope: an admin sees every realm and the server's overview; a realm manager its own realm only, and
// no overview (server-wide figures are the admin's). The watched realm (the page a visitor has open) adds
// its "detail": clients and their subscriptions, durable queues, streams and their consumers.
//
// Bounds: at most kMaxRealms realms (sorted by name; the overview says how many there are), and at most
// kMaxListed of each list in a detail or of the pending requests, so a view stays small whatever the
// server holds. Cost: O(realms + queues + DLQ entries) a second, plus the watched realm's names and
// subscriptions (broker/realm_view.cc, broker/queue_view.cc).
//
// Threading: gather() starts on the caller's thread (the broker, the enrolments and the settings are read
// there), goes on on the durable queues' thread and then the streams' thread (each reads its own state),
// and comes back through `back` to make the JSON and call `done` on the caller's thread. `parts` must
// outlive every gather in progress (the server owns them).
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "surfaces/tyo_mq/context.h"

namespace siomq::broker {
class Streams;
}

namespace siomq::surfaces::console {

inline constexpr size_t kMaxRealms = 1000;
inline constexpr size_t kMaxListed = 500;

// What the view reads besides the tyo-mq surface's context.
struct ConsoleParts {
  std::shared_ptr<Context> tyo;
  broker::Streams* streams = nullptr;
  std::string version, backend, sync;
  size_t threads = 0;
  std::function<size_t()> connections, slow_consumers;
};

// Who is looking, and at what.
struct ConsoleScope {
  bool admin = false;
  std::string realm;  // a manager's realm ("" for an admin)
  std::optional<std::string> watched;
};

// Key -> JSON text, keys in order.
using ConsoleView = std::vector<std::pair<std::string, std::string>>;

// Runs a function on the caller's thread (a post to its loop).
using Back = std::function<void(std::function<void()>)>;
void gather(const ConsoleParts& parts, ConsoleScope scope, Back back, std::function<void(ConsoleView)> done);

}  // namespace siomq::surfaces::console
