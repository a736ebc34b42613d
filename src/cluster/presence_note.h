// The note a node sends on <c>:presence (siomq's own; a reference node does not listen) for a presence
// change its clients made that other nodes' clients may hear of (broker/peer_presence.h):
//   {"node_id":N,"realm":R,"kind":"producer_online"|"producer_offline"|"subscribed"|"consumer_online"|
//    "consumer_offline","name":…,"socket":…,"id":…,"producer":…,"names":[…],"online":bool}
// Pure; any thread.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "broker/peer_presence.h"

namespace siomq::cluster {

inline constexpr const char* kPresenceChannel = "presence";

struct PresenceNote {
  std::string node_id, realm;
  broker::PeerPresence change;
};
// nullopt when the note would be larger than a node reads (kMaxNoteBytes): a name that long.
std::optional<std::string> encode_presence_note(const PresenceNote& note);
// nullopt when the text is not such a note (validated whole, at most kMaxNoteBytes).
std::optional<PresenceNote> decode_presence_note(std::string_view text);

}  // namespace siomq::cluster
