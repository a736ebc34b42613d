// One AUTH_MANAGEMENT_COMMAND whose proof has been checked, as its command's handler sees it, and the
// shape of a handler in the command table (management.cc).
//
// Every reference is valid for the handler's call only; a handler that answers later copies what it
// needs (the Context's shared_ptr, the endpoint, the ack id) into its callback.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <memory>
#include <optional>

#include "auth/live_settings.h"
#include "net/socket.h"
#include "surfaces/tyo_mq/context.h"
#include "surfaces/tyo_mq/socket_endpoint.h"

namespace siomq::surfaces::management {

struct Call {
  const std::shared_ptr<Context>& ctx;
  const auth::Snapshot& snap;
  const nlohmann::json& body;  // the signed body
  bool realm_signed;           // by the realm's manager_key, not an admin token
  net::Socket& socket;
  const net::Message& msg;
  const std::shared_ptr<SocketEndpoint>& endpoint;
};

using Handler = void (*)(const Call& call);

// An asynchronous command's answer (stats aside), from any thread: the ack callback, else
// AUTH_MANAGEMENT_RESULT when ok and AUTH_MANAGEMENT_FAIL when not.
void async_result(const std::shared_ptr<SocketEndpoint>& to, std::optional<uint64_t> ack_id, const nlohmann::json& payload);

}  // namespace siomq::surfaces::management
