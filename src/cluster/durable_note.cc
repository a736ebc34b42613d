#include "cluster/durable_note.h"

#include "cluster/document_json.h"
#include "cluster/link.h"

namespace siomq::cluster {

std::string encode_durable_note(const DurableNote& note) {
  if (note.kind == DurableNote::Kind::adopt)
    return document_text(nlohmann::json{{"adopt", note.section}, {"to", note.to}});
  return document_text(
      nlohmann::json{{"move", note.consumer}, {"realm", note.realm}, {"from", note.from}, {"to", note.to}});
}

std::optional<DurableNote> decode_durable_note(std::string_view text) {
  auto j = parse_note(text, kMaxNoteBytes);
  if (!j) return std::nullopt;
  DurableNote note;
  const std::string* to = string_member(*j, "to");
  if (!to || to->empty()) return std::nullopt;
  note.to = *to;
  if (const std::string* section = string_member(*j, "adopt")) {
    if (!valid_section(*section)) return std::nullopt;
    note.kind = DurableNote::Kind::adopt;
    note.section = *section;
    return note;
  }
  const std::string* consumer = string_member(*j, "move");
  const std::string* realm = string_member(*j, "realm");
  const std::string* from = string_member(*j, "from");
  if (!consumer || !realm || !from || consumer->empty() || from->empty()) return std::nullopt;
  note.realm = *realm;
  note.consumer = *consumer;
  note.from = *from;
  return note;
}

bool valid_section(std::string_view section) {
  if (section.empty() || section.size() > 128) return false;
  for (unsigned char c : section) {
    if (c <= 0x20 || c >= 0x7f) return false;
  }
  return true;
}

}  // namespace siomq::cluster
