#include "surfaces/tyo_mq/delivery.h"

#include <openssl/rand.h>

#include <algorithm>
#include <chrono>
#include <initializer_list>
#include <random>

#include "surfaces/tyo_mq/context.h"
#include "wire/engineio.h"
#include "wire/js_json.h"
#include "wire/json_text.h"
#include "wire/socketio.h"

namespace siomq::surfaces {
namespace {

using json_text::object;

// Sends `payload` as `event` (CONSUME-<key>), in CONSUME_CHUNK pieces when it is too long (§4.2).
std::vector<FramesPtr> delivery_frames(
    const std::string& event, std::string_view payload, std::span<const std::string> attachments) {
  // UTF-16 length <= bytes: a short payload needs no count.
  if (payload.size() <= kChunkThreshold || eio::utf16_length(payload) <= kChunkThreshold || !attachments.empty())
    return {event_frames(event, payload, {attachments.begin(), attachments.end()})};
  // transferId as the reference makes it: base36(now) "-" random base36; pieces split at UTF-8 boundaries.
  uint64_t now = static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch()).count());
  uint64_t nonce = 0;
  RAND_bytes(reinterpret_cast<unsigned char*>(&nonce), sizeof nonce);
  std::string transfer = js::base36(now) + "-" + js::base36(nonce);
  std::vector<std::string_view> pieces;
  std::string_view rest = payload;
  while (!rest.empty()) {
    size_t n = std::min(rest.size(), kChunkThreshold);
    while (n < rest.size() && (static_cast<unsigned char>(rest[n]) & 0xc0) == 0x80) --n;  // not inside a character
    pieces.push_back(rest.substr(0, n));
    rest.remove_prefix(n);
  }
  std::vector<FramesPtr> out;
  for (size_t i = 0; i < pieces.size(); ++i) {
    std::string chunk = "{\"transferId\":";
    sio::append_json_string(chunk, transfer);
    chunk += ",\"event\":";
    sio::append_json_string(chunk, event);
    chunk += ",\"index\":" + std::to_string(i) + ",\"total\":" + std::to_string(pieces.size()) + ",\"data\":";
    sio::append_json_string(chunk, pieces[i]);
    chunk.push_back('}');
    out.push_back(event_frames("CONSUME_CHUNK", chunk));
  }
  return out;
}

// {"event":"CONNECT"|"DISCONNECT","socket":…,"producer":name} — a consumer peer's CONNECT carries its id too.
std::string link_payload(const broker::Presence& p, std::string_view event) {
  if (p.peer_is_producer)
    return object({{"event", json_text::quoted(event)}, {"socket", json_text::quoted(p.peer_socket)}, {"producer", json_text::quoted(p.name)}});
  if (event == "CONNECT")
    return object({{"event", json_text::quoted(event)}, {"socket", json_text::quoted(p.peer_socket)}, {"id", json_text::quoted(p.peer_id)},
                   {"consumer", json_text::quoted(p.name)}});
  return object({{"event", json_text::quoted(event)}, {"socket", json_text::quoted(p.peer_socket)}, {"consumer", json_text::quoted(p.name)}});
}

}  // namespace

std::shared_ptr<const TyoMqEncoding> encode_delivery(const broker::Delivery& d) {
  auto out = std::make_shared<TyoMqEncoding>();
  const std::string event = "CONSUME-" + std::string(d.key);
  if (d.whole) {
    out->frames.push_back(event_frames(event, d.payload, {d.attachments.begin(), d.attachments.end()}));
  } else if (d.attempt > 0) {
    out->frames = delivery_frames(event, with_ack_fields(d.payload, d.msg_id, d.attempt), d.attachments);
  } else {
    out->frames = delivery_frames(event, d.payload, d.attachments);
  }
  return out;
}

std::string with_ack_fields(std::string_view payload, std::string_view id, int attempt) {
  if (payload.empty() || payload.back() != '}') return std::string(payload);
  // Built in one buffer sized for it: every ACK-mode delivery comes through here.
  std::string out;
  out.reserve(payload.size() + 2 * id.size() + 64);
  out.append(payload.substr(0, payload.size() - 1));
  if (out.size() > 1) out.push_back(',');
  out += "\"msgId\":";
  sio::append_json_string(out, id);
  out += ",\"msg_id\":";
  sio::append_json_string(out, id);
  out += ",\"delivery_attempt\":";
  out += std::to_string(attempt);
  out.push_back('}');
  return out;
}

std::pair<std::string, std::string> presence_event(const broker::Presence& p) {
  using Kind = broker::Presence::Kind;
  switch (p.kind) {
    case Kind::replaced:
      return {"ERROR", json_text::quoted("The same producer newly joined")};
    case Kind::subscribed: {
      std::string events = "[";
      for (const auto& k : p.keys) {
        if (events.size() > 1) events.push_back(',');
        events += json_text::quoted(k);
      }
      events.push_back(']');
      return {"SUBSCRIBE-TO-" + p.to_id,
              object({{"name", json_text::quoted(p.name)}, {"id", json_text::quoted(p.peer_id)}, {"socket", json_text::quoted(p.peer_socket)},
                      {"events", events}, {"online", p.online ? "true" : "false"}})};
    }
    case Kind::connected:
      return {"CONNECT-" + p.to_id, link_payload(p, "CONNECT")};
    case Kind::disconnected:
      return {"DISCONNECT-" + p.to_id, link_payload(p, "DISCONNECT")};
  }
  return {};
}

std::string new_message_id(int shard) {
  // Called on the durable queues' thread only today; thread_local keeps it safe from any.
  thread_local std::mt19937_64 rng = [] {
    uint64_t seed = 0;
    RAND_bytes(reinterpret_cast<unsigned char*>(&seed), sizeof seed);
    return std::mt19937_64(seed ^ static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count()));
  }();
  // Built in place (one allocation): it is made for every stored copy.
  std::string id;
  id.reserve(4 + 13 + 1 + 12);
  id += "msg-";
  js::append_base36(id, static_cast<uint64_t>(unix_ms()));
  id += '-';
  uint64_t random = rng();
  if (shard >= 0) random = (random & ~uint64_t{0xf}) | (static_cast<uint64_t>(shard) & 0xf);  // its shard's
  for (int shift = 44; shift >= 0; shift -= 4) id += "0123456789abcdef"[(random >> shift) & 0xf];
  return id;
}

}  // namespace siomq::surfaces
