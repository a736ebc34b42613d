#include "cluster/interest.h"

#include <algorithm>
#include <charconv>

#include "cluster/document_json.h"
#include "wire/socketio.h"
#include "wire/subscription_key.h"

namespace siomq::cluster {
namespace {

Error interest_error(const std::string& why) { return Error{400, "interest: " + why}; }

void append_terms(std::string& out, const std::vector<InterestTerm>& terms) {
  out += '[';
  for (size_t i = 0; i < terms.size(); ++i) {
    if (i) out += ',';
    out += interest_field(terms[i]);
  }
  out += ']';
}

// A ["realm","term"] pair, as nlohmann parsed it.
std::optional<InterestTerm> term_of(const nlohmann::json& pair) {
  if (!pair.is_array() || pair.size() != 2 || !pair[0].is_string() || !pair[1].is_string()) return std::nullopt;
  InterestTerm t{pair[0].get<std::string>(), pair[1].get<std::string>()};
  if (t.realm.size() > kMaxInterestFieldBytes || t.term.size() > kMaxInterestFieldBytes) return std::nullopt;
  return t;
}

Result<std::vector<InterestTerm>> terms_member(const nlohmann::json& note, const char* name) {
  std::vector<InterestTerm> out;
  auto it = note.find(name);
  if (it == note.end()) return out;
  if (!it->is_array()) return interest_error(std::string(name) + " must be an array");
  out.reserve(it->size());
  for (const auto& pair : *it) {
    auto t = term_of(pair);
    if (!t) return interest_error(std::string(name) + " holds something other than [realm, term] strings");
    out.push_back(std::move(*t));
  }
  return out;
}

}  // namespace

std::string interest_field(const InterestTerm& t) {
  std::string out = "[";
  sio::append_json_string(out, t.realm);
  out += ',';
  sio::append_json_string(out, t.term);
  out += ']';
  return out;
}

Result<InterestTerm> decode_interest_field(std::string_view text) {
  if (text.size() > 2 * kMaxInterestFieldBytes + 16) return interest_error("field too long");
  if (!js::validate(text)) return interest_error("field is not JSON");
  auto pair = nlohmann::json::parse(text, nullptr, false);
  auto t = term_of(pair);
  if (!t) return interest_error("field is not [realm, term]");
  return *t;
}

std::string interest_note_head(const std::string& node_id) {
  std::string out = "{\"node_id\":";
  sio::append_json_string(out, node_id);
  out += ",\"version\":";
  return out;
}

std::optional<std::string> interest_note_tail(const std::vector<InterestTerm>& add, const std::vector<InterestTerm>& remove) {
  std::string out = ",\"add\":";
  append_terms(out, add);
  out += ",\"remove\":";
  append_terms(out, remove);
  out += '}';
  if (out.size() > kMaxInterestNoteBytes) return std::nullopt;
  return out;
}

std::string interest_reread_tail() { return ",\"reread\":true}"; }

Result<InterestNote> decode_interest_note(std::string_view text, size_t max_bytes) {
  auto doc = parse_document(std::string(text), max_bytes, "the interest note is");
  if (!doc) return interest_error(doc.error().message);
  InterestNote note;
  const std::string* node = string_member(*doc, "node_id");
  if (!node || node->empty()) return interest_error("node_id is required");
  note.node_id = *node;
  auto v = doc->find("version");
  if (v == doc->end() || !v->is_number_unsigned()) return interest_error("version must be a whole number");
  note.version = v->get<uint64_t>();
  auto reread = doc->find("reread");
  note.reread = reread != doc->end() && reread->is_boolean() && reread->get<bool>();
  if (note.reread) return note;
  auto add = terms_member(*doc, "add");
  if (!add) return add.error();
  auto remove = terms_member(*doc, "remove");
  if (!remove) return remove.error();
  note.add = std::move(*add);
  note.remove = std::move(*remove);
  return note;
}

void InterestView::Peer::add(const InterestTerm& t) {
  if (everything) return;
  if (count >= kMaxPeerTerms) {
    everything = true;
    realms.clear();
    return;
  }
  if (t.term.empty()) return;
  const char kind = t.term[0];
  std::string_view rest = std::string_view(t.term).substr(1);
  if (kind == '*' && rest.empty()) {
    RealmTerms& r = realms[t.realm];
    if (!r.all) ++count;
    r.all = true;
  } else if (kind == '=') {
    if (realms[t.realm].keys.emplace(rest).second) ++count;
  } else if (kind == '~') {
    RealmTerms& r = realms[t.realm];
    auto [it, fresh] = r.pattern_ids.try_emplace(std::string(rest), next_id);
    if (!fresh) return;
    r.patterns.insert(rest, next_id++);
    ++count;
  } else if (kind == 'g' && broker::parse_group_interest_term(rest)) {
    if (realms[t.realm].groups.emplace(rest).second) ++count;
  } else if (((kind == 'b' || kind == 's') && !rest.empty()) || (kind == 'q' && broker::parse_queue_interest_term(rest))) {
    if (realms[t.realm].bus.emplace(t.term).second) ++count;
  }
}

void InterestView::Peer::remove(const InterestTerm& t) {
  if (everything || t.term.empty()) return;  // past the cap what it holds is unknown: everything until read again
  auto r = realms.find(t.realm);
  if (r == realms.end()) return;
  RealmTerms& terms = r->second;
  const char kind = t.term[0];
  std::string_view rest = std::string_view(t.term).substr(1);
  bool gone = false;
  if (kind == '*' && rest.empty()) {
    gone = terms.all;
    terms.all = false;
  } else if (kind == '=') {
    auto e = terms.keys.find(rest);
    if ((gone = e != terms.keys.end())) terms.keys.erase(e);
  } else if (kind == '~') {
    auto p = terms.pattern_ids.find(std::string(rest));
    if ((gone = p != terms.pattern_ids.end())) {
      terms.patterns.erase(rest, p->second);
      terms.pattern_ids.erase(p);
    }
  } else if (kind == 'g') {
    auto g = terms.groups.find(rest);
    if ((gone = g != terms.groups.end())) terms.groups.erase(g);
  } else if (kind == 'b' || kind == 's' || kind == 'q') {
    gone = terms.bus.erase(t.term) > 0;
  }
  if (gone) --count;
  if (terms.empty()) realms.erase(r);
}

bool InterestView::Peer::wants(std::string_view realm, const std::string (&keys)[3], std::string_view event) const {
  if (everything) return true;
  auto r = realms.find(realm);
  if (r == realms.end()) return false;
  const RealmTerms& terms = r->second;
  if (terms.all) return true;
  for (const auto& key : keys) {
    if (terms.keys.find(key) != terms.keys.end()) return true;
  }
  if (terms.patterns.empty()) return false;
  thread_local std::vector<broker::SubjectIndex::Id> matched;
  matched.clear();
  terms.patterns.match(event, matched);
  return !matched.empty();
}

uint64_t InterestView::version(const std::string& node) const {
  auto it = peers_.find(node);
  return it == peers_.end() ? 0 : it->second.version;
}

std::vector<std::string> InterestView::nodes() const {
  std::vector<std::string> out;
  out.reserve(peers_.size());
  for (const auto& [node, peer] : peers_) out.push_back(node);
  return out;
}

bool InterestView::apply(const InterestNote& note) {
  auto it = peers_.find(note.node_id);
  if (it == peers_.end() || note.reread) return false;
  Peer& peer = it->second;
  if (note.version <= peer.version) return true;  // already read with the hash
  if (note.version != peer.version + 1) return false;
  // Past the cap what the peer holds is unknown here: a removal may bring it back under, so read it.
  if (peer.everything && !note.remove.empty()) return false;
  auto group = [](const InterestTerm& t) { return !t.term.empty() && t.term[0] == 'g'; };
  if (std::any_of(note.remove.begin(), note.remove.end(), group) || std::any_of(note.add.begin(), note.add.end(), group))
    groups_changed_ = true;
  auto bus = [](const InterestTerm& t) { return !t.term.empty() && (t.term[0] == 'b' || t.term[0] == 's' || t.term[0] == 'q'); };
  if (std::any_of(note.remove.begin(), note.remove.end(), bus) || std::any_of(note.add.begin(), note.add.end(), bus))
    bus_changed_ = true;
  const bool was_everything = peer.everything;
  for (const auto& t : note.remove) peer.remove(t);
  for (const auto& t : note.add) peer.add(t);
  if (peer.everything != was_everything) groups_changed_ = bus_changed_ = true;  // (its terms went with the cap)
  peer.version = note.version;
  return true;
}

size_t InterestView::replace(const std::string& node, uint64_t version, const std::vector<std::string>& fields) {
  auto it = peers_.find(node);
  if (it != peers_.end() && version < it->second.version) return 0;
  Peer peer;
  peer.version = version;
  size_t skipped = 0;
  for (const auto& f : fields) {
    if (auto t = decode_interest_field(f)) peer.add(*t);
    else ++skipped;
  }
  peers_[node] = std::move(peer);
  groups_changed_ = bus_changed_ = true;
  return skipped;
}

std::shared_ptr<const broker::RemoteGroups> InterestView::take_groups() {
  if (!groups_changed_) return nullptr;
  groups_changed_ = false;
  auto out = std::make_shared<broker::RemoteGroups>();
  for (const auto& [node, peer] : peers_) {
    for (const auto& [realm, terms] : peer.realms) {
      for (const auto& g : terms.groups) {
        auto [group, key] = *broker::parse_group_interest_term(g);
        auto& members = out->realms[realm][std::string(key)];
        if (members.size() < kMaxGroupsPerKey) members.push_back({std::string(group), node});
      }
    }
  }
  return out;
}

std::shared_ptr<const broker::RemoteBus> InterestView::take_bus() {
  if (!bus_changed_) return nullptr;
  bus_changed_ = false;
  auto out = std::make_shared<broker::RemoteBus>();
  for (const auto& [node, peer] : peers_) {
    out->add_node(node);
    if (peer.everything) {
      out->add_everywhere(node);
      continue;
    }
    for (const auto& [realm, terms] : peer.realms) {
      // The bus's terms only: tyo-mq's "*" (a term too long) is no bus interest, and realm "*" (a realm
      // name too long to share) no bus realm (a client's realm name is far shorter).
      if (realm == "*") continue;
      for (const auto& term : terms.bus) {
        std::string_view rest = std::string_view(term).substr(1);
        if (term[0] == 'b') {
          out->add_plain(realm, rest, node);
        } else if (term[0] == 's') {
          out->add_stream(realm, rest, node);
        } else {
          auto [queue, pattern] = *broker::parse_queue_interest_term(rest);
          out->add_queue(realm, queue, pattern, node);
        }
      }
    }
  }
  return out;
}

void InterestView::targets(std::string_view realm, std::string_view producer, std::string_view event,
                           std::vector<std::string>& out) const {
  if (peers_.empty()) return;
  // The keys RealmRegistry::route looks up, made the same way.
  std::string keys[3];
  tyo_mq::assign_subscription_key(keys[0], producer, event);
  tyo_mq::append_lower(keys[1], producer);
  keys[1].append(tyo_mq::kAllEventsSuffix);
  keys[2].assign("tyo-mq-all-");
  tyo_mq::append_lower(keys[2], event);
  std::string lowered = tyo_mq::lower(event);
  for (const auto& [node, peer] : peers_) {
    if (peer.wants(realm, keys, lowered) || peer.wants("*", keys, lowered)) out.push_back(node);
  }
}

}  // namespace siomq::cluster
