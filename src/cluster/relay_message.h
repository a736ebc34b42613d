// A produced message relayed between nodes, in tyo-mq §10's shape, so that siomq nodes and reference
// (Node.js tyo-mq) nodes on one Redis read each other's:
//   {"node_id":N,"payload":{"realm","event","message","producer","ttl","guaranteed","enc","to",
//                           "contentType","method","broadcast","group"}}
// `message`, `ttl`, `enc` and `to` are raw JSON values, spliced as they came (never re-encoded); the
// reference may omit `producer` and `ttl`, and sends null for the optional strings. siomq adds
// "attachments":["<base64>",…] to the payload when the PRODUCE carried binary attachments (the message
// keeps its Socket.IO placeholders, {"_placeholder":true,"num":N}); a reference node ignores the member,
// as it does "groups".
//
// The decoder takes text from Redis as hostile input: validated whole first (simdjson, iterative, depth
// and UTF-8 checked), bounded in size, every field type-checked; anything else is an error and nothing
// is delivered. Pure; any thread.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "broker/remote_groups.h"
#include "wire/result.h"

namespace siomq::cluster {

struct RelayedMessage {
  std::string node_id;
  std::string realm;
  std::string event;
  std::string message;                  // raw JSON; "" when absent
  std::optional<std::string> producer;  // absent: the receiver uses ANONYMOUS
  std::string ttl;                      // raw JSON (a number, or a string the reference keeps as sent); "" when absent
  bool guaranteed = false;
  std::string enc, to;                  // raw JSON; "" when absent or null
  std::optional<std::string> content_type;
  bool broadcast = false;               // method:"broadcast"
  std::optional<std::string> broadcast_scope;  // "realm" or "group"
  std::optional<std::string> group;
  std::vector<std::string> attachments;  // binary, in placeholder order
  // siomq's own, "groups":[…] in the payload: the consumer groups whose turn the origin gave the receiving
  // node (docs/scale-out.md "Consumer groups"); each gets one member there. At most kMaxRelayedGroups.
  std::vector<std::string> groups;
  // Not in the text: the origin's picks, which node gets which group's turn (Cluster::relay sends each
  // node its own "groups").
  std::vector<broker::RemoteGroupPick> group_picks;
  // siomq's own, "confirm":N in the envelope (0: none): the PRODUCE waits for a publisher confirm, and
  // each receiving node answers how many copies it stored (RelayAnswer) before the origin gives it.
  uint64_t confirm = 0;
  // Not in the text: at the origin, told the copies the other nodes stored, once each node sent to has
  // answered, or with an error when one did not in time (any thread). Set: Cluster::relay asks for answers.
  std::function<void(size_t stored, const Status& status)> confirmed;
};

// A receiving node's answer to a relayed message with "confirm" (docs/scale-out.md "Durable queues across
// nodes"), on the origin's relay channel: {"confirmed":N,"node_id":…,"stored":k[,"error":"…"]}.
struct RelayAnswer {
  std::string node_id;
  uint64_t confirm = 0;
  uint64_t stored = 0;
  std::optional<std::string> error;  // the copies could not be stored there
};
std::string encode_relay_answer(const RelayAnswer& a);
// Whether a text on a relay channel is an answer (not a relayed message): it starts so.
bool is_relay_answer(std::string_view text);
// nullopt when the text is not one (validated whole, at most 64 KiB).
std::optional<RelayAnswer> decode_relay_answer(std::string_view text);

inline constexpr size_t kMaxRelayedGroups = 1024;

// The envelope's text.
std::string encode_relay(const RelayedMessage& m);
// `envelope` (encode_relay's text) with "groups":[…] added to its payload.
std::string with_groups(std::string_view envelope, const std::vector<std::string>& groups);

// The envelope read back; 400 naming the first problem. Texts above `max_bytes` are refused unread.
Result<RelayedMessage> decode_relay(std::string_view text, size_t max_bytes);

}  // namespace siomq::cluster
