// §11.1's caps on names (PRODUCER/CONSUMER) and subscriptions, at their three levels: the session's own,
// the realm's, the server's.
//
// Threading: on the session's worker, under the realm's lock when `in_realm` reads the realm.
#pragma once

#include <set>
#include <string>
#include <utility>

#include "surfaces/gate.h"
#include "surfaces/reply.h"
#include "surfaces/session.h"
#include "wire/clock.h"

namespace siomq::surfaces {

// One cap on names or subscriptions, at its three levels, and the reason RATE_LIMITED gives for each.
struct Cap {
  double per_socket, per_realm, server;
  const char *socket_reason, *realm_reason, *server_reason;
};

// True when `item` is already counted in `mine` (the session's names or subscriptions) or fits, and then
// counts it; otherwise RATE_LIMITED (retry_after 60) and the request is dropped. A session's items are
// counted only while a cap applies; `in_realm()` and `in_server()` are asked only when their cap is set.
template <class Count, class Total>
bool within_cap(Session& session, Reply& reply, std::set<std::pair<std::string, std::string>>& mine,
                const std::pair<std::string, std::string>& item, const Cap& cap, Count in_realm, Total in_server) {
  if (cap.per_socket <= 0 && cap.per_realm <= 0 && cap.server <= 0) return true;  // not counted while no cap applies
  if (mine.count(item)) return true;
  const char* reason = nullptr;
  if (cap.per_socket > 0 && static_cast<double>(mine.size()) >= cap.per_socket) reason = cap.socket_reason;
  else if (cap.per_realm > 0 && static_cast<double>(in_realm()) >= cap.per_realm) reason = cap.realm_reason;
  else if (cap.server > 0 && static_cast<double>(in_server()) >= cap.server) reason = cap.server_reason;
  if (reason) {
    rate_limited(session, reply, reason, 60, steady_ms());
    return false;
  }
  mine.insert(item);
  return true;
}

}  // namespace siomq::surfaces
