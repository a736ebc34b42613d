// The E2EE directories of the tyo-mq protocol (§12, §0 row 13): KEY_PUBLISH / KEY_LOOKUP (public keys)
// and PREKEY_PUBLISH / PREKEY_TAKE (Signal prekey bundles), over the engine's key directory
// (broker/key_directory.h); and the sealed-sender and push commands, which this server does not offer
// (501). The broker never decrypts; the realm's `e2ee` policy on PRODUCE is in publish.cc.
//
// Who may do what (docs/protocol-notes.md, "E2EE directories"): every event passes the §6.3 gate with
// the roles producer and consumer, as the reference's; KEY_PUBLISH and PREKEY_PUBLISH are accepted only
// for an `identity` that is a producer or consumer name bound to this very connection in its realm.
// Everything is per realm: the session's. Answers go to the ack callback once the change is on disk.
//
// Threading: on the session's worker; the answers may come from the store writer's thread.
#pragma once

#include "surfaces/reply.h"
#include "surfaces/request.h"
#include "surfaces/session.h"
#include "surfaces/tyo_mq/context.h"

namespace siomq::surfaces {

// {ok:true}; refusals {ok:false, code, message}: 400 bad field, 403 identity not registered on this
// connection, 429 eight keys already, 507 directory full.
void on_key_publish(Context& ctx, Session& session, const Request& request, Reply& reply);
// {keys:[{key_id, alg, public_key, updated_at}]}: empty for an unknown identity.
void on_key_lookup(Context& ctx, Session& session, const Request& request, Reply& reply);
// {ok:true, one_time_available}; refusals as KEY_PUBLISH (a missing Kyber prekey is a 400).
void on_prekey_publish(Context& ctx, Session& session, const Request& request, Reply& reply);
// {ok:true, found:true, identity, <bundle>, one_time_prekey, one_time_prekey_id, one_time_remaining,
// updated_at}, the one-time prekey null when the pool is empty; {ok:true, found:false} for an unknown
// identity (the reference clients turn that into null).
void on_prekey_take(Context& ctx, Session& session, const Request& request, Reply& reply);
// SEALED_CERT_REQUEST, SEALED_UAK_SET, SEALED_DELIVER, SEALED_SUBSCRIBE: {ok:false, code:501, message}.
void on_sealed_sender(Context& ctx, Session& session, const Request& request, Reply& reply);
// PUSH_REGISTER, PUSH_UNREGISTER: {ok:false, code:501, message}.
void on_push(Context& ctx, Session& session, const Request& request, Reply& reply);

}  // namespace siomq::surfaces
