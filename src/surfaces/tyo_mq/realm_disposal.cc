#include "surfaces/tyo_mq/realm_disposal.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <set>

#include "broker/durable_queues.h"
#include "broker/key_directory.h"
#include "surfaces/tyo_mq/cluster_keys.h"
#include "surfaces/tyo_mq/enrolment.h"
#include "surfaces/tyo_mq/socket_endpoint.h"
#include "wire/log_text.h"

namespace siomq::surfaces {

using nlohmann::json;

Result<Disposal> dispose_realm(Context& ctx, const std::string& realm,
                               std::function<void(const Status&, const Disposal&)> stored) {
  Disposal d;
  bool known = false;
  auto s = ctx.settings.update([&](json& doc) -> Status {
    if (doc.contains("auth") && doc["auth"].is_object()) {
      json& auth = doc["auth"];
      if (auth.contains("realms") && auth["realms"].is_object()) known = auth["realms"].erase(realm) > 0 || known;
      if (auth.contains("tokens") && auth["tokens"].is_array()) {
        json& tokens = auth["tokens"];
        for (auto it = tokens.begin(); it != tokens.end();) {
          if (it->is_object() && it->value("realm", "default") == realm) {
            it = tokens.erase(it);
            ++d.removed_tokens;
          } else {
            ++it;
          }
        }
      }
    }
    return Ok{};
  });
  if (!s) return s.error();
  auto names = ctx.broker.realm_names();
  known = known || d.removed_tokens > 0 || std::find(names.begin(), names.end(), realm) != names.end() ||
          ctx.keys.has_realm(realm);
  if (!known) return make_error("Realm '" + realm + "' not found", 404);
  // Its sockets: those authenticated into it, and any bound to a name in its live state. Counted once
  // each, by socket id (one socket is found both ways: as a Session and as a broker::Endpoint).
  std::set<std::string> closed;
  for (auto& s : ctx.sessions.in_realm(realm)) {
    if (closed.insert(s->id()).second) s->close();
  }
  for (auto& e : ctx.broker.remove_realm(realm)) {
    if (closed.insert(e->socket_id()).second) e->close();
  }
  d.disconnected_sockets = closed.size();
  forget_requests(ctx, realm);
  // Its E2EE directories go with it (the new realm of the same name starts with none).
  forget_shared_keys(ctx, realm);
  ctx.keys.purge_realm(realm, [realm](const Status& st) {
    if (!st) spdlog::error("removing realm '{}': its key directory could not be deleted: {}", log_text(realm), st.error().message);
  });
  if (ctx.on_realm_removed) ctx.on_realm_removed(realm);
  ctx.queues.purge_realm(realm, [realm, d, stored = std::move(stored)](const Status& st) {
    if (!st) spdlog::error("removing realm '{}': its stored messages could not be deleted: {}", log_text(realm), st.error().message);
    if (stored) stored(st, d);
  });
  spdlog::info("realm '{}' removed: {} tokens, {} sockets disconnected", log_text(realm), d.removed_tokens, d.disconnected_sockets);
  return d;
}

}  // namespace siomq::surfaces
