#include "surfaces/tyo_mq/cluster_presence.h"

#include <spdlog/spdlog.h>

#include "broker/broker.h"
#include "cluster/presence_note.h"
#include "surfaces/tyo_mq/answers.h"
#include "wire/log_text.h"

namespace siomq::surfaces {

void share_presence(cluster::Link& link, const std::string& realm, const std::vector<broker::PeerPresence>& changes) {
  cluster::PresenceNote note{link.node_id(), realm, {}};
  for (const auto& change : changes) {
    note.change = change;
    if (auto text = cluster::encode_presence_note(note)) link.publish(cluster::kPresenceChannel, std::move(*text));
    else spdlog::warn("presence: a change of '{}' in realm '{}' is too large to tell the other nodes", log_text(change.name), log_text(realm));
  }
}

void on_presence_note(Context& ctx, const std::string& text) {
  if (!ctx.cluster) return;
  auto note = cluster::decode_presence_note(text);
  if (!note || note->node_id == ctx.cluster->node_id()) return;
  std::vector<broker::Notice> notices;
  std::vector<broker::PeerPresence> answers;
  ctx.broker.if_realm(note->realm, [&](broker::RealmRegistry& r) { notices = r.peer_presence(note->change, answers); });
  send_notices(notices);
  share_presence(*ctx.cluster, note->realm, answers);
}

}  // namespace siomq::surfaces
