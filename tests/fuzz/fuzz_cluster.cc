// libFuzzer target for what a cluster's nodes read from Redis (src/cluster): relayed messages
// (decode_relay), the shared settings document and its change note, the shared authorization requests
// and their decision note, the shared key directory and its change note, the interest notes and hash
// fields of the interest-based relay (with the bus directory built from them), the realm-removed note, the
// presence note, the relayed bus message (decode_bus_relay).
//
// Invariants: nothing crashes or takes more than linear time (-timeout); a message that decodes encodes
// back to text that decodes to the same message (so a relayed message is passed on unchanged, whatever
// node wrote it); a shared document's `settings` is valid JSON; a note's author round-trips; a requests
// document that parses writes back valid JSON that parses to the same text, and stays so after a request
// is filed and decided in it; an interest note that decodes encodes back to the same note, and the
// view it is applied to matches without crashing.
#include <cstdint>
#include <string>
#include <string_view>

#include "cluster/bus_relay.h"
#include "cluster/interest.h"
#include "cluster/presence_note.h"
#include "cluster/realm_note.h"
#include "cluster/durable_note.h"
#include "cluster/relay_message.h"
#include "cluster/shared_keys.h"
#include "cluster/shared_requests.h"
#include "cluster/shared_settings.h"
#include "wire/js_json.h"

namespace {

using namespace siomq;
using namespace siomq::cluster;

void check(bool ok) {
  if (!ok) __builtin_trap();
}

bool same(const RelayedMessage& a, const RelayedMessage& b) {
  return a.node_id == b.node_id && a.realm == b.realm && a.event == b.event && a.message == b.message &&
         a.producer == b.producer && a.ttl == b.ttl && a.guaranteed == b.guaranteed && a.enc == b.enc && a.to == b.to &&
         a.content_type == b.content_type && a.broadcast == b.broadcast && a.broadcast_scope == b.broadcast_scope &&
         a.group == b.group && a.attachments == b.attachments && a.groups == b.groups && a.confirm == b.confirm;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  if (auto m = decode_relay(text, 1 << 20)) {
    std::string again = encode_relay(*m);
    check(static_cast<bool>(js::validate(again)));
    auto back = decode_relay(again, 1 << 21);
    check(back && same(*m, *back));
  }
  if (auto doc = decode_shared_settings(text)) {
    check(static_cast<bool>(js::validate(doc->document)));
    auto back = decode_shared_settings(encode_shared_settings(doc->document, doc->node_id, 0));
    check(back && back->document == doc->document && back->node_id == doc->node_id);
  }
  if (auto author = settings_note_author(text)) {
    if (author->size() < 1000) check(settings_note_author(encode_settings_note(1, *author)) == *author);
  }
  if (auto requests = SharedRequests::parse(std::string(text))) {
    std::string once = requests->text();
    check(static_cast<bool>(js::validate(once)));
    auto again = SharedRequests::parse(once);
    check(again && again->text() == once);
    auth::AuthorizationRequest r;
    r.request_id = "fuzz";
    r.realm = r.role = r.client_id = r.client_name = r.client_token = "x";
    if (requests->file(r, "s", "n", 0, 1'800'000'000'000)) check(static_cast<bool>(requests->decide("fuzz", true, "x", std::nullopt, 1'800'000'000'001)));
    requests->next_public(std::nullopt);
    check(static_cast<bool>(js::validate(requests->text())));
  }
  if (auto note = decode_decision_note(text, "own")) check(note->node_id.size() <= text.size());
  if (auto keys = SharedKeys::parse(std::string(text))) {
    keys->for_each(8, [&](const std::string& realm, const std::string& identity, std::vector<broker::PublicKey> read) {
      check(!read.empty() && read.size() <= 8);
      check(keys->keys(realm, identity, 8) == read);
    });
    if (keys->publish("fuzz-realm", "fuzz", {"k", "", "QQ==", 1}, broker::KeyDirectoryLimits{}))
      check(!keys->keys("fuzz-realm", "fuzz", 8).empty());
    check(static_cast<bool>(js::validate(keys->text())));
  }
  if (auto note = decode_keys_note(text)) check(decode_keys_note(encode_keys_note(*note)).has_value());
  if (auto note = decode_interest_note(text, 1 << 20)) {
    if (!note->reread) {
      auto tail = interest_note_tail(note->add, note->remove);
      if (tail) {
        auto back = decode_interest_note(interest_note_head(note->node_id) + std::to_string(note->version) + *tail, 1 << 21);
        check(back && back->node_id == note->node_id && back->add == note->add && back->remove == note->remove);
      }
    }
    InterestView view;
    view.replace(note->node_id, note->version ? note->version - 1 : 0, {});
    view.apply(*note);
    std::vector<std::string> out;
    for (const auto& t : note->add) view.targets(t.realm, t.term, t.term, out);
    check(out.size() <= note->add.size());
    // The bus directory the same terms make answers for any subject without crashing.
    if (auto bus = view.take_bus()) {
      for (const auto& t : note->add) {
        std::vector<std::string> nodes;
        bus->plain_targets(t.realm, t.term, nodes);
        check(nodes.size() <= 1);
        (void)bus->any(t.realm, t.term);
      }
    }
  }
  if (auto note = decode_presence_note(text)) {
    auto encoded = encode_presence_note(*note);
    auto back = encoded ? decode_presence_note(*encoded) : std::nullopt;
    check(back && back->node_id == note->node_id && back->realm == note->realm && back->change.kind == note->change.kind &&
          back->change.name == note->change.name && back->change.names == note->change.names &&
          back->change.online == note->change.online);
  }
  if (auto m = decode_bus_relay(text, 1 << 20)) {
    std::string again = encode_bus_relay(m->node_id, m->realm, m->message, m->queues);
    check(static_cast<bool>(js::validate(again)));
    auto back = decode_bus_relay(again, 1 << 21);
    check(back && back->node_id == m->node_id && back->realm == m->realm && back->message.subject == m->message.subject &&
          back->message.reply == m->message.reply && back->message.header == m->message.header &&
          back->message.data == m->message.data && back->queues == m->queues);
  }
  if (auto note = decode_realm_note(text)) {
    auto back = decode_realm_note(encode_realm_note(*note));
    check(back && back->node_id == note->node_id && back->realm == note->realm);
  }
  if (auto a = decode_relay_answer(text)) {
    auto back = decode_relay_answer(encode_relay_answer(*a));
    check(back && back->node_id == a->node_id && back->confirm == a->confirm && back->stored == a->stored &&
          back->error == a->error);
  }
  if (auto note = decode_durable_note(text)) {
    auto back = decode_durable_note(encode_durable_note(*note));
    check(back && back->kind == note->kind && back->to == note->to && back->section == note->section &&
          back->realm == note->realm && back->consumer == note->consumer && back->from == note->from);
    check(note->kind != DurableNote::Kind::adopt || valid_section(note->section));
  }
  if (auto field = decode_interest_field(text)) {
    auto again = decode_interest_field(interest_field(*field));
    check(again && *again == *field);
  }
  return 0;
}
