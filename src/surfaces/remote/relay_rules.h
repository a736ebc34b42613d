// The relay rule table of a relay namespace (/remote and the configured ones, tyo-mq §12): for an event
// sent by one side of a session (the agent or a viewer), whether it is relayed, to which side, and how
// (opaque, or as a binary frame). Rules are keyed by an exact event name or by a prefix pattern
// ("input.*": every event that starts with "input."); an exact rule beats a pattern, a longer pattern a
// shorter one. An event with no rule goes to the opposite side unless `unlisted` is off; an allow-list,
// when present, is applied first; reserved names (auth control events, Socket.IO's own) never relay.
//
// Plain data, immutable once built; matching takes time linear in the event name's length (a lookup per
// '.' in it), never in the number of rules.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace siomq::remote {

// The two sides of a session. Agents join the session's agent room, viewers its viewers room.
enum class Role { agent, viewer };
// Who may send an event under a rule (the role guard).
enum class From { agent, viewer, any };
// Where a relayed event goes: the agent room, the viewers room, or the sender's opposite side.
enum class To { agent, viewers, opposite };

struct RelayRule {
  bool enabled = true;  // false: the event is dropped
  From from = From::any;
  To to = To::opposite;
  // Frame semantics: the first argument (a binary attachment, or an object whose `frame` is one or is
  // base64 text) is re-emitted as one binary attachment.
  bool binary = false;
  // The largest relayed payload of this event in bytes (JSON and attachments); 0: the namespace's cap.
  size_t max_bytes = 0;
};

// A set of event names: exact names and "<prefix>.*" patterns.
class EventSet {
 public:
  // Adds `pattern`; false if it is not a valid name or pattern (see valid_pattern).
  bool add(std::string_view pattern);
  bool contains(std::string_view event) const;
  size_t size() const { return exact_.size() + prefixes_.size(); }

 private:
  std::map<std::string, bool, std::less<>> exact_, prefixes_;  // prefixes keep their trailing '.'
};

class RuleTable {
 public:
  // Sets the rule for an exact name or a "<prefix>.*" pattern, replacing one already there; false if
  // the key is not valid (valid_pattern) or names a reserved event.
  bool set(std::string_view key, RelayRule rule);
  // The rule that applies to `event`: its exact rule, else the rule of the longest matching pattern.
  const RelayRule* find(std::string_view event) const;
  size_t size() const { return exact_.size() + prefixes_.size(); }

 private:
  std::map<std::string, RelayRule, std::less<>> exact_, prefixes_;  // prefixes keep their trailing '.'
};

// /remote's built-in rules (§12): frame agent→viewers (binary), input.* and remote.setmonitor,
// rtc.answer, rtc.ready viewer→agent, rtc.offer agent→viewers, rtc.ice to the opposite side.
RuleTable builtin_rules();

// Events never relayed, whatever the rules say: auth, auth_ok, auth_error (a peer must not forge the
// server's answers at the other side), RATE_LIMITED (ours), and the names Socket.IO reserves.
bool is_reserved_event(std::string_view event);

// A rule key or allow-list entry: an event name, or "<prefix>.*" with a non-empty prefix; 1 to 256
// bytes, no control characters.
bool valid_pattern(std::string_view pattern);

// The rules of one namespace.
struct RelayRules {
  RuleTable table;
  bool relay_unlisted = true;     // an event without a rule goes to the opposite side
  std::optional<EventSet> allow;  // when set, only these events are relayed at all
};

// What to do with one event: nullopt drops it; otherwise the side it goes to and the rule's options.
struct RelayDecision {
  Role to;
  bool binary = false;
  size_t max_bytes = 0;
};
std::optional<RelayDecision> decide(const RelayRules& rules, std::string_view event, Role sender);

}  // namespace siomq::remote
