#include "cluster/realm_note.h"

#include "cluster/document_json.h"
#include "cluster/link.h"

namespace siomq::cluster {

std::string encode_realm_note(const RealmNote& note) {
  return document_text(nlohmann::json{{"node_id", note.node_id}, {"realm", note.realm}});
}

std::optional<RealmNote> decode_realm_note(std::string_view text) {
  auto note = parse_note(text, kMaxNoteBytes);
  if (!note) return std::nullopt;
  const std::string* node = string_member(*note, "node_id");
  const std::string* realm = string_member(*note, "realm");
  if (!node || !realm || node->empty()) return std::nullopt;
  return RealmNote{*node, *realm};
}

}  // namespace siomq::cluster
