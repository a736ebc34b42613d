// AUTHENTICATION (§6.2, §6.4 with the external validators); the enrolment flow (§7) is enrolment.h's and
// registered with it.
//
// Lifetimes: a validator's answer arrives later on the socket's worker; its callback holds the Context,
// the Session and a kept reply (shared), and drops the answer if the socket has gone.
#pragma once

#include <memory>

#include "surfaces/reply.h"
#include "surfaces/request.h"
#include "surfaces/session.h"
#include "surfaces/tyo_mq/context.h"

namespace siomq::net {
struct Namespace;
}

namespace siomq::surfaces {

// AUTHENTICATION (§6.2, §6.4), for the surfaces that check a token the same way (HTTP publish's Bearer).
void on_authentication(Context& ctx, Session& session, const Request& request, Reply& reply);

// Adds AUTHENTICATION and the enrolment handlers to `ns`; each holds `ctx`.
void register_auth_handlers(const std::shared_ptr<Context>& ctx, net::Namespace& ns);

}  // namespace siomq::surfaces
