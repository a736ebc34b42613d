// Connecting for a command: a tyo-mq Client (authenticated when the context has a token) or a bus Conn,
// with the context's servers and credentials; and the round trips that tell a fire-and-forget sender
// that the server has handled what it sent.
#pragma once

#include <memory>
#include <string>

#include "siomq/bus.h"
#include "siomq/result.h"
#include "siomq/tyomq.h"
#include "tools/cli/context.h"

namespace siomq::cli {

// Connected, and authenticated with ctx.token (and ctx.realm) when `authenticate` and there is a token.
// An error says whether it failed connecting or authenticating.
Result<std::unique_ptr<tyomq::Client>> connect_tyomq(const Context& ctx, bool authenticate, Use use = Use::request);

// Connected on "/" with ctx.token and, when `control`, on "/control" with the control token (else the
// admin token, else the token) and ctx.realm.
Result<std::unique_ptr<bus::Conn>> connect_bus(const Context& ctx, bool control, Use use = Use::request);

// Waits until the server has handled every event sent before on "/": a PING for tyo-mq (whose gate
// refusal counts as handled), a subscription to a fresh inbox for the bus (as NATS's Flush).
Status flush(tyomq::Client& client);
Status flush(bus::Conn& conn);

// True for the gate's refusal of flush()'s PING, which is not about anything the command sent.
bool is_flush_refusal(const tyomq::ServerError& e);

// What signs manager commands: `manager_key` when given, else the admin token; empty when neither is.
std::string signing_secret(const Context& ctx, const std::string& manager_key);

}  // namespace siomq::cli
