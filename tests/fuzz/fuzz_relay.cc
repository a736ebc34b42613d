// libFuzzer target for the relay namespaces (src/surfaces/remote): the rule-table parser (the `remote`
// and `namespaces` settings → rules), the event-name matching of the relay, and the payload a relayed
// event carries (opaque verbatim, or a frame from binary or base64).
//
// The input is read three ways: as a settings document (parse_relay_settings, which either throws
// std::runtime_error or gives rules); as an event name, matched against those rules and the built-ins
// for both roles; and, when it is valid JSON, as a packet's data with one attachment (relay_payload).
// Invariants: reserved names never relay; a rule's role guard holds; an allow-list is honoured; a
// relayed payload is valid JSON within its cap, and a frame carries exactly one attachment no larger than
// the cap; nothing crashes or takes more than linear time (-timeout).
#include <nlohmann/json.hpp>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "surfaces/remote/relay_payload.h"
#include "surfaces/remote/relay_rules.h"
#include "surfaces/remote/relay_settings.h"
#include "wire/js_json.h"

namespace {

using namespace siomq;
using namespace siomq::remote;

void check(bool ok) {
  if (!ok) __builtin_trap();
}

void match_both_roles(const RelayRules& rules, std::string_view event) {
  for (Role sender : {Role::agent, Role::viewer}) {
    auto d = decide(rules, event, sender);
    if (!d) continue;
    check(!is_reserved_event(event));
    check(!rules.allow || rules.allow->contains(event));
    if (const RelayRule* rule = rules.table.find(event)) {
      check(rule->enabled);
      check(rule->from == From::any || (rule->from == From::agent) == (sender == Role::agent));
    } else {
      check(rules.relay_unlisted && d->to != sender);
    }
  }
}

void as_settings(std::string_view input, std::string_view event) {
  auto doc = nlohmann::json::parse(input, nullptr, false);
  if (doc.is_discarded()) return;
  try {
    RelaySettings s = parse_relay_settings(doc);
    check(s.namespaces.size() <= kMaxNamespaces);
    match_both_roles(s.remote.rules, event);
    for (const auto& [name, ns] : s.namespaces) {
      check(valid_namespace_name(name) && name != "/remote");
      match_both_roles(ns.rules, event);
    }
    (void)attached_namespaces(doc);
  } catch (const std::runtime_error&) {
  }
}

void as_packet(std::string_view input) {
  if (!js::validate(input).ok()) return;
  const std::vector<std::string> attachments{std::string("\x00\x01\xff", 3)};
  for (bool binary : {false, true}) {
    for (size_t cap : {size_t{2}, size_t{64}, size_t{1} << 20}) {
      auto p = relay_payload("ev", input, attachments, binary, cap);
      if (!p) continue;
      check(js::validate(p->json).ok());
      if (binary) check(p->attachments.size() == 1 && p->attachments[0].size() <= cap);
      else check(p->json.size() <= cap);
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  match_both_roles(RelayRules{builtin_rules(), true, std::nullopt}, input);
  // The event name the settings are matched with: the input's last line (or the whole input).
  size_t nl = input.rfind('\n');
  as_settings(input, nl == std::string_view::npos ? input : input.substr(nl + 1));
  as_packet(input);
  return 0;
}
