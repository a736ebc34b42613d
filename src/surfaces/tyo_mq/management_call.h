// One AUTH_MANAGEMENT_COMMAND whose proof has been checked, as its command's handler sees it, and the
// shape of a handler in the command table (management.cc).
//
// Every reference is valid for the handler's call only; a handler that answers later keeps what it needs
// (ctx.shared_from_this(), reply.keep()) in its callback.
#pragma once

#include <nlohmann/json.hpp>


#include "auth/live_settings.h"
#include "surfaces/tyo_mq/context.h"
#include "surfaces/reply.h"

namespace siomq::surfaces::management {

struct Call {
  Context& ctx;
  const auth::Snapshot& snap;
  const nlohmann::json& body;  // the signed body
  bool realm_signed;           // by the realm's manager_key, not an admin token
  Reply& reply;
};

using Handler = void (*)(const Call& call);

// An asynchronous command's answer (stats aside), from any thread: the ack callback, else
// AUTH_MANAGEMENT_RESULT when ok and AUTH_MANAGEMENT_FAIL when not.
void async_result(Reply& to, const nlohmann::json& payload);

}  // namespace siomq::surfaces::management
