#include "cluster/presence_note.h"

#include <array>

#include "cluster/document_json.h"
#include "cluster/link.h"

namespace siomq::cluster {
namespace {

using Kind = broker::PeerPresence::Kind;
constexpr std::array<std::pair<Kind, const char*>, 5> kKinds{{{Kind::producer_online, "producer_online"},
                                                              {Kind::producer_offline, "producer_offline"},
                                                              {Kind::subscribed, "subscribed"},
                                                              {Kind::consumer_online, "consumer_online"},
                                                              {Kind::consumer_offline, "consumer_offline"}}};

}  // namespace

std::optional<std::string> encode_presence_note(const PresenceNote& note) {
  const broker::PeerPresence& c = note.change;
  const char* kind = "";
  for (const auto& [k, name] : kKinds) {
    if (k == c.kind) kind = name;
  }
  std::string text = document_text(nlohmann::json{{"node_id", note.node_id}, {"realm", note.realm}, {"kind", kind},
                                                   {"name", c.name}, {"socket", c.socket}, {"id", c.id},
                                                   {"producer", c.producer}, {"names", c.names}, {"online", c.online}});
  if (text.size() > kMaxNoteBytes) return std::nullopt;
  return text;
}

std::optional<PresenceNote> decode_presence_note(std::string_view text) {
  auto note = parse_note(text, kMaxNoteBytes);
  if (!note) return std::nullopt;
  PresenceNote out;
  const std::string* kind = string_member(*note, "kind");
  if (!kind) return std::nullopt;
  bool known = false;
  for (const auto& [k, name] : kKinds) {
    if (*kind == name) {
      out.change.kind = k;
      known = true;
    }
  }
  if (!known) return std::nullopt;
  std::string* fields[] = {&out.node_id, &out.realm, &out.change.name, &out.change.socket, &out.change.id,
                           &out.change.producer};
  const char* keys[] = {"node_id", "realm", "name", "socket", "id", "producer"};
  for (size_t i = 0; i < std::size(keys); ++i) {
    const std::string* value = string_member(*note, keys[i]);
    if (!value) return std::nullopt;
    *fields[i] = *value;
  }
  if (out.node_id.empty() || out.change.name.empty()) return std::nullopt;
  auto names = note->find("names");
  auto online = note->find("online");
  if (names == note->end() || !names->is_array() || online == note->end() || !online->is_boolean()) return std::nullopt;
  for (const auto& n : *names) {
    if (!n.is_string()) return std::nullopt;
    out.change.names.push_back(n.get<std::string>());
  }
  out.change.online = online->get<bool>();
  return out;
}

}  // namespace siomq::cluster
