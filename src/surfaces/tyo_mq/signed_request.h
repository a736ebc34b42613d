// The signed events of §7 and §8 (AUTHORIZATION_NEXT, AUTHORIZATION_DECIDE, AUTH_MANAGEMENT_COMMAND):
// reading their {body, proof} payload, checking who signed it, and answering them.
//
// A SignedRequest owns copies of what it read (it outlives the request's buffers). verify_signer records
// an accepted proof's nonce in `ctx.nonces` (thread-safe), so a proof is accepted once; in a cluster,
// once_claimed then claims it for every node (§10) before the request runs.
#pragma once

#include <nlohmann/json.hpp>

#include <functional>
#include <string>
#include <string_view>

#include "auth/live_settings.h"
#include "surfaces/reply.h"
#include "surfaces/request.h"
#include "surfaces/session.h"
#include "surfaces/tyo_mq/context.h"
#include "wire/result.h"

namespace siomq::surfaces {

// The {body, proof} payload of §7's and §8's signed events: body parsed (an object; {} when absent)
// and as sent, for the proof. An error (400) when the payload is not an object or body is not one.
struct SignedRequest {
  nlohmann::json body;
  std::string body_raw;
  std::string proof_raw;
};
Result<SignedRequest> signed_request(const Request& request);
// Who signed (§8.1): any admin token, else `realm_key` when it is given and not empty. 401 otherwise,
// with the proof's own message (missing, invalid, nonce already used).
enum class Signer { admin, realm };
// `nonce` (when given) gets the accepted proof's nonce.
Result<Signer> verify_signer(Context& ctx, const auth::Snapshot& snap, std::string_view action, const SignedRequest& req,
                             const std::string* realm_key, std::string* nonce = nullptr);
// After verify_signer accepted a proof: in a cluster, its nonce is claimed for the whole cluster first
// and `then` runs afterwards on the session's worker, with a reply that outlives the handler; a claim
// that fails (used on another node: 401; Redis unavailable: 503) is answered through `refused` instead.
// On a node alone `then` runs at once with `reply`. `then` must own what it uses.
void once_claimed(Context& ctx, Session& session, Reply& reply, const std::string& nonce,
                  std::function<void(Session&, Reply&)> then, std::function<void(Reply&, const Error&)> refused);
// The answer of a signed event: to the ack callback when there is one, else as `event`. From another
// thread (an asynchronous command finishing on the durable queues' or the main thread) on a kept reply.
void answer(Reply& reply, std::string_view event, const nlohmann::json& payload);
// {ok:false, code, message} of an error (a code of 0 is a 500).
nlohmann::json failure(const Error& e);

}  // namespace siomq::surfaces
