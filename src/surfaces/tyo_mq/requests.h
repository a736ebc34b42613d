// The payloads of tyo-mq requests (protocol §3), read from the raw event JSON without building a tree:
// field aliases, the nested `options` of SUBSCRIBE, payloads sent as JSON strings, and the validation of
// §0 row 1 (a malformed request is an error value, never a crash). Values the broker relays unchanged
// (`message`, `to`, `enc`) stay raw JSON spans.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "broker/realm_registry.h"
#include "wire/durations.h"
#include "wire/result.h"

namespace siomq::json {
class Outline;
}

namespace siomq::surfaces {

// The error code tyo-mq clients get in ERROR {code, message} for a malformed request.
inline constexpr int kMalformedRequest = -2;
// The code of the one malformed request the reference answers with a bare string in ERROR instead of
// {code, message}: a SUBSCRIBE without an event. The code itself never reaches the client.
inline constexpr int kBareStringError = -1002;

// Where the transport's validating pass found a request's arguments and their members (Request::args and
// Request::outline): a reader given it takes the payload object's members from there instead of scanning
// the object again. Empty (or for an object that came another way, such as a JSON string payload) the
// reader scans; the answer is the same either way.
struct Outlined {
  std::string_view args;
  const ::siomq::json::Outline* outline = nullptr;
};

// The request object of an event: the first argument, an object or a JSON string holding one. `storage`
// keeps an unescaped string payload alive; the returned view points into `args` or `storage`. With the
// `outline` of `args`, its elements are not scanned again.
Result<std::string_view> request_object(std::string_view args, std::string& storage, const ::siomq::json::Outline* outline = nullptr);

// JSON that reached the broker inside a string (a payload sent as a JSON string, the joined pieces of
// PRODUCE_CHUNK) has met no validator yet: this checks it as a packet's JSON is checked (js::validate)
// and that it is an object. Whatever passes may be read, relayed and stored.
Status check_object_text(std::string_view text);

struct SubscribeRequest {
  std::string event;
  std::string producer = "ANONYMOUS";
  std::string consumer = "ANONYMOUS";
  std::optional<std::string> id;           // consumer id for presence addressing; default: the socket id
  std::optional<std::string> consumer_id;  // durable queue key; default: id
  std::string scope = "default";
  bool durable = false;
  bool ack = false;                        // ack, require_ack, requireAck, manual_ack, manualAck
  std::string_view ack_timeout;            // raw JSON (a number of seconds or a duration string), empty if absent
  std::string_view retry;                  // raw JSON object, empty if absent
  std::string mode;                        // "topic" for MQTT matching
  std::optional<std::string> group;
};

struct ProduceRequest {
  std::string event;
  std::string_view message;  // raw JSON, empty when the field is absent
  std::string from = "ANONYMOUS";
  std::optional<std::string> id;
  bool guaranteed = false;
  std::string_view ttl;       // raw JSON
  std::string_view lifespan;  // raw JSON
  bool broadcast = false;     // method:"broadcast"
  std::string broadcast_scope;  // "realm" or "group"
  std::optional<std::string> group;
  std::string_view to;   // raw JSON, copied into deliveries
  std::string_view enc;  // raw JSON, copied into deliveries
  std::optional<std::string> content_type;
};

// PRODUCER / CONSUMER (§3.1, §3.2): `name` is nullopt unless it is a string; `id` only when a non-empty string.
struct Registration {
  std::optional<std::string> name;
  std::optional<std::string> id;
  std::string_view default_ttl;  // raw JSON (PRODUCER only)
};

// One PRODUCE_CHUNK piece (§3.6).
struct ProduceChunk {
  std::string transfer_id;
  size_t index = 0;
  size_t total = 0;
  std::string data;
};

// `object` is the request object from request_object; views in the result point into it.
Registration parse_registration(std::string_view object);
Result<ProduceChunk> parse_produce_chunk(std::string_view object);
Result<SubscribeRequest> parse_subscribe(std::string_view object);
Result<ProduceRequest> parse_produce(std::string_view object, Outlined outlined = {});
// ACK (§3.7): the message id from msgId, msg_id or id. The error's message is the ACK_FAIL text.
Result<std::string> parse_ack(std::string_view object, Outlined outlined = {});

// Durations and TTLs (wire/durations.h), as the requests read them.
using durations::parse_duration_ms;
using durations::parse_ttl;
using durations::Ttl;

// SUBSCRIBE's ACK mode, ack_timeout and retry (§5.2) with their defaults.
broker::DeliveryPolicy delivery_policy(const SubscribeRequest& request);

// The TTL of a stored copy (§5.5): the message's ttl, else its lifespan (unless -1), else the
// producer's default, else the store's. nullopt: never expires.
std::optional<int64_t> effective_ttl(const ProduceRequest& request, std::optional<int64_t> producer_default_ms,
                                     std::optional<int64_t> store_default_ms);

}  // namespace siomq::surfaces
