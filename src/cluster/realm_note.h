// The note a node sends on <c>:realm:removed (siomq's own; a reference node does not listen) after it
// removed a realm — the settings change that removed it published first —: {"node_id":N,"realm":R}. The
// other nodes then release what they hold of the realm themselves (its sockets, live state, stored rows).
// Pure; any thread.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace siomq::cluster {

inline constexpr const char* kRealmRemovedChannel = "realm:removed";

struct RealmNote {
  std::string node_id, realm;
};
std::string encode_realm_note(const RealmNote& note);
// nullopt when the text is not such a note (validated whole, at most kMaxNoteBytes).
std::optional<RealmNote> decode_realm_note(std::string_view text);

}  // namespace siomq::cluster
