// A realm goes away (remove_realm, an expired ephemeral realm): its settings and tokens (written to the
// settings file), its live state, its sockets (disconnected), its pending enrolments, its stored rows,
// DLQ entries and durable subscriptions, and its E2EE key directory.
//
// Called from a worker (remove_realm) or the housekeeping thread; everything it touches locks inside.
#pragma once

#include <cstddef>
#include <functional>
#include <string>

#include "surfaces/tyo_mq/context.h"
#include "wire/result.h"

namespace siomq::surfaces {

struct Disposal {
  size_t removed_tokens = 0;
  size_t disconnected_sockets = 0;
};
// 404 when nothing of the realm exists. `stored` is called (on the queues' thread) once the deletion of
// its stored rows is written; it must not refer to anything that may be gone by then. In a cluster the
// shared documents drop the realm too, and with `notify` the other nodes are told to release theirs
// (cluster/realm_note.h; not for an expired realm, which every node expires itself). The counts and
// `stored` speak of this node.
Result<Disposal> dispose_realm(Context& ctx, const std::string& realm, bool notify,
                               std::function<void(const Status&, const Disposal&)> stored = {});

// This node's part of a removal, the settings left alone: its sockets in the realm (closed; returns how
// many), its live state, pending enrolments, key directory, stored rows (then `stored`, with `d` and the
// sockets closed), and Context::on_realm_removed.
size_t release_realm(Context& ctx, const std::string& realm, std::function<void(const Status&, const Disposal&)> stored,
                     const Disposal& d);

// Another node removed a realm (its note on <c>:realm:removed, handed over after the settings change
// that removed it was adopted): this node releases its part — unless its settings still hold the realm
// (made again meanwhile), or it is one remove_realm refuses ("default", "*").
void on_realm_removed_note(Context& ctx, const std::string& text);

}  // namespace siomq::surfaces
