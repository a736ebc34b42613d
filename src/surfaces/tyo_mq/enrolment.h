// Enrolment (tyo-mq §7): AUTHORIZATION_REQUEST files a client's request to join a realm with its own
// token; a manager polls with AUTHORIZATION_NEXT and decides with AUTHORIZATION_DECIDE (both signed,
// §8.1); an approved request's token joins auth.tokens, and the requester, while connected, is told
// (AUTHORIZATION_APPROVED / AUTHORIZATION_REJECTED).
//
// On a node alone the requests live in Context::enrolment. In a cluster they live in Redis
// (cluster/shared_requests.h, §10's <c>:authreqs), so that a manager on any node sees and decides a
// request filed on any other: filing, polling and deciding read or change that document and answer 503
// while Redis is away (rather than act on a partial view). Context::enrolment then books the requests
// filed here, to tell their requesters; the node that decides announces the decision on
// <c>:authreq:decided, after the settings change that adds the token, and the requester's node tells it
// (after adopting that change, so that the token works here once the requester hears of it).
//
// Threading: handlers run on the socket's worker; what the cluster answers continues there.
#pragma once

#include <memory>
#include <string>

#include "surfaces/tyo_mq/context.h"

namespace siomq::net {
struct Namespace;
}

namespace siomq::surfaces {

// The cluster's names for the document and its note channel (relative to the cluster prefix).
inline constexpr const char* kSharedRequestsDocument = "authreqs";
inline constexpr const char* kDecisionChannel = "authreq:decided";

// Adds AUTHORIZATION_REQUEST, AUTHORIZATION_NEXT and AUTHORIZATION_DECIDE to `ns`; each holds `ctx`.
void register_enrolment_handlers(const std::shared_ptr<Context>& ctx, net::Namespace& ns);
// A note on <c>:authreq:decided (from the cluster's thread): tells this node's requester.
void on_decision_note(Context& ctx, const std::string& text);
// In a cluster, a removed realm's requests leave the shared document (this node's book: release_realm).
void forget_shared_requests(Context& ctx, const std::string& realm);

}  // namespace siomq::surfaces
