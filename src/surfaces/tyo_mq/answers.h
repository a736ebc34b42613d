// How the tyo-mq handlers refuse a request, the same way from each of them: ERROR (§0 row 1) for one they
// cannot read, RATE_LIMITED past §11.1's message and byte buckets; and how they pass on the presence
// changes the engine hands back.
//
// Threading: on the requester's worker (they use the handler's Reply and change the Session); the
// notices may go to any endpoint, from any thread.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "auth/live_settings.h"
#include "broker/endpoint.h"
#include "surfaces/reply.h"
#include "surfaces/request.h"
#include "surfaces/session.h"
#include "wire/result.h"

namespace siomq::surfaces {

// ERROR to the requester, and {ok:false, code:400, message} as the answer if one is awaited.
void reply_error(Reply& reply, const Error& error);
// The request object of `request`, or nullopt once the error is sent. It may point into `storage`.
std::optional<std::string_view> request_object_or_error(const Request& request, Reply& reply, std::string& storage);
// §11.1's message and byte buckets for one request of `cost` bytes; false when it is dropped
// (RATE_LIMITED, and the answer, if one is awaited, is {ok:false, code:429}).
bool within_rate(const auth::Snapshot& snap, Session& session, Reply& reply, size_t cost);
// Sends each notice to its endpoint.
void send_notices(const std::vector<broker::Notice>& notices);

}  // namespace siomq::surfaces
