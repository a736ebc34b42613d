#include "surfaces/tyo_mq/realm_disposal.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <set>

#include "broker/broker.h"
#include "broker/durable_queues.h"
#include "broker/key_directory.h"
#include "cluster/realm_note.h"
#include "surfaces/tyo_mq/cluster_keys.h"
#include "surfaces/tyo_mq/enrolment.h"
#include "surfaces/tyo_mq/socket_endpoint.h"
#include "wire/log_text.h"

namespace siomq::surfaces {

using nlohmann::json;

Result<Disposal> dispose_realm(Context& ctx, const std::string& realm, bool notify,
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
  d.disconnected_sockets = release_realm(ctx, realm, std::move(stored), d);
  // Its shared enrolment requests and E2EE directory (in Redis) go with it; once both changes are done,
  // and only for a removal asked for (every node expires an ephemeral realm itself), the other nodes are
  // told to release theirs — after the settings change, which went out first.
  forget_shared_requests(ctx, realm);
  std::function<void()> tell;
  if (ctx.cluster && notify) {
    // Weak: the callback waits inside the cluster, which must not be kept alive by it.
    tell = [weak = std::weak_ptr<cluster::Link>(ctx.cluster), realm] {
      if (auto link = weak.lock()) link->publish(cluster::kRealmRemovedChannel, cluster::encode_realm_note({link->node_id(), realm}));
    };
  }
  forget_shared_keys(ctx, realm, std::move(tell));
  spdlog::info("realm '{}' removed: {} tokens, {} sockets disconnected", log_text(realm), d.removed_tokens, d.disconnected_sockets);
  return d;
}

size_t release_realm(Context& ctx, const std::string& realm, std::function<void(const Status&, const Disposal&)> stored,
                     const Disposal& d) {
  // Its sockets: those authenticated into it, and any bound to a name in its live state. Counted once
  // each, by socket id (one socket is found both ways: as a Session and as a broker::Endpoint).
  std::set<std::string> closed;
  for (auto& s : ctx.sessions.in_realm(realm)) {
    if (closed.insert(s->id()).second) s->close();
  }
  for (auto& e : ctx.broker.remove_realm(realm)) {
    if (closed.insert(e->socket_id()).second) e->close();
  }
  ctx.enrolment.remove_realm(realm);
  // Its E2EE directories go with it (the new realm of the same name starts with none).
  ctx.keys.purge_realm(realm, [realm](const Status& st) {
    if (!st) spdlog::error("removing realm '{}': its key directory could not be deleted: {}", log_text(realm), st.error().message);
  });
  if (ctx.on_realm_removed) ctx.on_realm_removed(realm);
  if (ctx.cluster) ctx.cluster->release_home(realm, "");
  Disposal copy = d;
  copy.disconnected_sockets = closed.size();
  ctx.queues.purge_realm(realm, [realm, copy, stored = std::move(stored)](const Status& st) {
    if (!st) spdlog::error("removing realm '{}': its stored messages could not be deleted: {}", log_text(realm), st.error().message);
    if (stored) stored(st, copy);
  });
  return closed.size();
}

void on_realm_removed_note(Context& ctx, const std::string& text) {
  if (!ctx.cluster) return;
  auto note = cluster::decode_realm_note(text);
  if (!note || note->node_id == ctx.cluster->node_id()) return;
  const std::string& realm = note->realm;
  // What remove_realm refuses, and a realm the settings hold (made again since, or the note is not what
  // it says): left alone.
  const auth::AuthConfig& auth = ctx.settings.current().auth;
  bool held = realm.empty() || realm == "default" || realm == broker::Broker::kMirrorRealm || auth.realm(realm) ||
              std::any_of(auth.tokens.begin(), auth.tokens.end(), [&](const auth::TokenEntry& t) { return t.realm == realm; });
  if (held) {
    spdlog::warn("cluster: node {} removed realm '{}', which this node's settings hold; kept", log_text(note->node_id), log_text(realm));
    return;
  }
  size_t closed = release_realm(ctx, realm, nullptr, Disposal{});
  spdlog::info("realm '{}' removed on node {}: {} sockets disconnected here", log_text(realm), log_text(note->node_id), closed);
}

}  // namespace siomq::surfaces
