// The E2EE public-key directory across a cluster's nodes (cluster/shared_keys.h, tyo-mq §10's
// <c>:e2eekeys): KEY_PUBLISH changes the shared document first (in a transaction, the per-identity cap
// checked there, 503 while Redis is away), then this node's KeyDirectory, then announces the change on
// <c>:e2eekeys:changed; the other nodes copy that identity's keys, and the whole document each time they
// (re)join, into their own KeyDirectory, where KEY_LOOKUP reads. Prekey bundles stay on the node they
// were published to (this round: a one-time prekey must be taken once cluster-wide, which the shared
// document cannot promise).
//
// Threading: any thread; answers come from the cluster's or the store writer's thread (kept replies).
#pragma once

#include <functional>
#include <string>

#include "broker/directory_values.h"
#include "surfaces/reply.h"
#include "surfaces/tyo_mq/context.h"

namespace siomq::surfaces {

inline constexpr const char* kSharedKeysDocument = "e2eekeys";
inline constexpr const char* kKeysChannel = "e2eekeys:changed";

// KEY_PUBLISH in a cluster, once the request is checked: answers {ok:true} once the key is in Redis and on
// this node's disk.
void publish_key_shared(Context& ctx, Reply& reply, const std::string& realm, const std::string& identity,
                        broker::PublicKey key);
// A note on <c>:e2eekeys:changed from another node: that identity's keys are copied here.
void on_keys_note(Context& ctx, const std::string& text);
// After this node (re)joined the cluster: every identity's keys are copied here.
void copy_shared_keys(Context& ctx);
// A removed realm's keys leave the shared document too; then `then` runs (on the cluster thread), after
// every document change this node queued before, whether it was written or not.
void forget_shared_keys(Context& ctx, const std::string& realm, std::function<void()> then = {});

}  // namespace siomq::surfaces
