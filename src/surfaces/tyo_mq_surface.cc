#include "surfaces/tyo_mq_surface.h"

#include <boost/asio/post.hpp>
#include <spdlog/spdlog.h>

#include <openssl/rand.h>

#include <map>

#include "broker/broker.h"
#include "broker/durable_queues.h"
#include "net/engine_session.h"
#include "net/sio_server.h"
#include "net/worker_pool.h"
#include "surfaces/ping.h"
#include "surfaces/tyo_mq_requests.h"
#include "wire/engineio.h"
#include "wire/js_json.h"
#include "wire/json_spans.h"
#include "wire/socketio.h"

namespace siomq::surfaces {
namespace {

const std::string kRealm = "default";  // until the auth issue brings realms

// What every handler reaches: the live registry, the durable queues and the store's default TTL.
struct Context {
  broker::Broker& broker;
  broker::DurableQueues& queues;
  TyoMqOptions options;
};

// Deliveries longer than this (in UTF-16 code units, as JavaScript measures) go out as CONSUME_CHUNK pieces.
constexpr size_t kChunkThreshold = 262144;
// Bytes of unfinished PRODUCE_CHUNK transfers one socket may hold.
constexpr size_t kMaxChunkedBytesPerSocket = 64 * 1024 * 1024;

// A PRODUCE arriving in pieces (§3.6).
struct ChunkedTransfer {
  size_t total = 0;
  size_t bytes = 0;
  std::map<size_t, std::string> pieces;
};

// A socket as the broker sees it; `send` may be called from any worker.
class SocketEndpoint : public broker::Endpoint {
 public:
  explicit SocketEndpoint(net::Socket& socket)
      : worker_(socket.session().worker()), socket_(socket.weak_from_this()), id_(socket.id()) {}
  const std::string& socket_id() const override { return id_; }

  // PRODUCE_CHUNK transfers in progress; touched only on the socket's own worker, dropped with the socket.
  std::map<std::string, ChunkedTransfer> transfers;
  size_t transfer_bytes = 0;

  void send(std::shared_ptr<const std::vector<net::OutFrame>> frames) {
    auto deliver = [socket = socket_, frames] {
      if (auto s = socket.lock()) s->send_frames(*frames);
    };
    if (worker_.is_current()) deliver();
    else boost::asio::post(worker_.io(), std::move(deliver));
  }

 private:
  net::Worker& worker_;
  std::weak_ptr<net::Socket> socket_;
  std::string id_;
};

// An event frame or an ack answer for a socket, sendable from any thread.
std::shared_ptr<const std::vector<net::OutFrame>> event_frames(std::string_view event, std::string_view payload,
                                                               std::vector<std::string> attachments = {});
std::shared_ptr<const std::vector<net::OutFrame>> ack_frames(uint64_t ack_id, std::string_view json_array) {
  return std::make_shared<const std::vector<net::OutFrame>>(net::encode_event("/", ack_id, true, json_array, {}));
}

std::shared_ptr<SocketEndpoint> endpoint_of(net::Socket& socket) {
  auto e = socket.state<SocketEndpoint>();
  if (!e) {
    e = std::make_shared<SocketEndpoint>(socket);
    socket.set_state(e);
  }
  return e;
}

std::shared_ptr<const std::vector<net::OutFrame>> event_frames(std::string_view event, std::string_view payload,
                                                               std::vector<std::string> attachments) {
  std::string array = "[";
  sio::append_json_string(array, event);
  array.push_back(',');
  array.append(payload);
  array.push_back(']');
  return std::make_shared<const std::vector<net::OutFrame>>(
      net::encode_event("/", std::nullopt, false, array, std::move(attachments)));
}

void send_notices(const std::vector<broker::Notice>& notices) {
  for (const auto& n : notices) {
    if (auto e = std::static_pointer_cast<SocketEndpoint>(n.to)) e->send(event_frames(n.event, n.payload));
  }
}

std::string error_object(int code, std::string_view message) {
  std::string out = "{\"message\":";
  sio::append_json_string(out, message);
  out += ",\"code\":" + std::to_string(code) + "}";
  return out;
}

// {ok:false, code, message}: the failure answer to an ack callback.
std::string error_reply(int code, std::string_view message) {
  std::string out = "{\"ok\":false,\"code\":" + std::to_string(code) + ",\"message\":";
  sio::append_json_string(out, message);
  out.push_back('}');
  return out;
}

// ERROR to the socket (§0 row 1), and {ok:false, code:400, message} to its ack callback if it asked.
void reply_error(net::Socket& socket, const net::Message& msg, const Error& error) {
  if (error.message == "Message name should be a object") {
    std::string bare;
    sio::append_json_string(bare, error.message);
    socket.emit("ERROR", bare);  // the reference sends this one as a bare string
  } else {
    socket.emit("ERROR", error_object(error.code, error.message));
  }
  if (msg.ack_id) socket.ack(*msg.ack_id, "[" + error_reply(400, error.message) + "]");
}

// The request object of an event, or the error already sent.
std::optional<std::string_view> request(net::Socket& socket, const net::Message& msg, std::string& storage) {
  auto r = request_object(msg.json, storage);
  if (!r) {
    reply_error(socket, msg, Error{r.error().code, std::string(msg.event) + ": " + r.error().message});
    return std::nullopt;
  }
  return *r;
}

struct NamedRegistration {
  std::string name;
  std::string id;
  std::optional<int64_t> default_ttl_ms;  // -1: the producer's messages never expire
};

// A registration's name and id (§3.1, §3.2): name must be a string; id defaults to the socket id.
std::optional<NamedRegistration> registration(net::Socket& socket, const net::Message& msg, std::string_view what) {
  std::string storage;
  auto object = request(socket, msg, storage);
  if (!object) return std::nullopt;
  auto reg = parse_registration(*object);
  if (!reg.name) {
    reply_error(socket, msg, Error{-1, "Incorrect " + std::string(what) + "'s name"});
    return std::nullopt;
  }
  NamedRegistration out{std::move(*reg.name), reg.id.value_or(socket.id()), std::nullopt};
  Ttl ttl = parse_ttl(reg.default_ttl);
  if (ttl.kind == Ttl::Kind::never) out.default_ttl_ms = -1;
  if (ttl.kind == Ttl::Kind::ms) out.default_ttl_ms = ttl.ms;
  return out;
}

// The delivery object of §4.2: {event, message, from, [enc], [to], [content_type]}, message spliced raw.
std::string delivery_payload(const ProduceRequest& p) {
  std::string out = "{\"event\":";
  sio::append_json_string(out, p.event);
  if (!p.message.empty()) {
    out += ",\"message\":";
    out += p.message;
  }
  out += ",\"from\":";
  sio::append_json_string(out, p.from);
  if (!p.enc.empty()) out += ",\"enc\":" + std::string(p.enc);
  if (!p.to.empty()) out += ",\"to\":" + std::string(p.to);
  if (p.content_type) {
    out += ",\"content_type\":";
    sio::append_json_string(out, *p.content_type);
  }
  out.push_back('}');
  return out;
}

// Sends `payload` as `event` (CONSUME-<key>), in CONSUME_CHUNK pieces when it is too long (§4.2).
std::vector<std::shared_ptr<const std::vector<net::OutFrame>>> delivery_frames(
    const std::string& event, const std::string& payload, const std::vector<std::string>& attachments) {
  if (eio::utf16_length(payload) <= kChunkThreshold || !attachments.empty())
    return {event_frames(event, payload, attachments)};
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
  std::vector<std::shared_ptr<const std::vector<net::OutFrame>>> out;
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

void send_all(const broker::EndpointPtr& to, const std::vector<std::shared_ptr<const std::vector<net::OutFrame>>>& frames) {
  auto e = std::static_pointer_cast<SocketEndpoint>(to);
  for (const auto& f : frames) e->send(f);
}

// Broadcast (§4.6): never stored, never mirrored to "*".
void broadcast(broker::Broker& broker, const ProduceRequest& p, const std::string& payload,
               const std::vector<std::string>& attachments) {
  if (p.broadcast_scope == "group" && p.group) {
    auto routes = broker.with_realm(kRealm, [&](broker::Realm& realm) { return realm.group_members(*p.group); });
    for (const auto& r : routes) send_all(r.endpoint, delivery_frames("CONSUME-" + r.key, payload, attachments));
    return;
  }
  // The realm's four events (the reference's misnamed fifth, <p>-TM-ALL-CONSUME, is not sent: §0 row 12).
  auto members = broker.with_realm(kRealm, [&](broker::Realm& realm) { return realm.members(); });
  std::vector<std::shared_ptr<const std::vector<net::OutFrame>>> frames;
  for (const std::string& event : {"CONSUME-" + p.event, "CONSUME-" + broker::subscription_key(p.from, p.event),
                                   "CONSUME-tyo-mq-all-" + broker::lower(p.event),
                                   "CONSUME-" + broker::lower(p.from) + std::string(broker::kAllEventsSuffix)})
    frames.push_back(event_frames(event, payload, attachments));
  for (const auto& m : members) send_all(m, frames);
}

// The publisher confirm of a PRODUCE sent with an ack id: {ok:true, stored:N} once its stored copies
// are written, {ok:false, code, message} if they could not be.
std::string confirm_reply(size_t stored, const Status& status) {
  if (status) return "[{\"ok\":true,\"stored\":" + std::to_string(stored) + "}]";
  return "[" + error_reply(status.error().code ? status.error().code : 500, status.error().message) + "]";
}

// PRODUCE (§3.5) of a request object; `attachments` are the packet's binary attachments. Each routed
// copy is sent live or stored, as §5.1's table says.
void produce(Context& ctx, net::Socket& socket, const net::Message& msg, std::string_view object,
             const std::vector<std::string>& attachments) {
  auto p = parse_produce(object);
  if (!p) return reply_error(socket, msg, p.error());
  std::string payload = delivery_payload(*p);
  if (p->broadcast) {
    broadcast(ctx.broker, *p, payload, attachments);
    if (msg.ack_id) socket.ack(*msg.ack_id, confirm_reply(0, Ok{}));
    return;
  }
  auto endpoint = endpoint_of(socket);
  auto routing = ctx.broker.route_produce(kRealm, p->event, p->from, p->id, endpoint);
  // One encoding per subscription key, shared by every consumer under it.
  std::map<std::string, std::vector<std::shared_ptr<const std::vector<net::OutFrame>>>> frames;
  std::vector<broker::QueueCopy> copies;
  for (auto& route : routing.routes) {
    // ACK mode is always stored first; an offline durable or guaranteed copy is stored; an online
    // durable one passes through its queue, so that it cannot overtake a replay of that queue.
    bool store = route.policy.ack || (!route.endpoint && (route.durable || p->guaranteed));
    if (store || (route.durable && route.endpoint)) {
      copies.push_back({std::move(route.realm), std::move(route.key), std::move(route.consumer_id),
                        std::move(route.consumer), route.policy, !store});
      continue;
    }
    if (!route.endpoint) continue;  // offline, nothing asks to keep it: dropped
    auto& f = frames[route.key];
    if (f.empty()) f = delivery_frames("CONSUME-" + route.key, payload, attachments);
    send_all(route.endpoint, f);
  }
  if (copies.empty()) {
    if (msg.ack_id) socket.ack(*msg.ack_id, confirm_reply(0, Ok{}));
    return;
  }
  auto message = std::make_shared<broker::StoredMessage>();
  message->payload = std::move(payload);
  message->attachments = attachments;
  message->producer = p->from;
  message->ttl_ms = effective_ttl(*p, routing.default_ttl_ms, ctx.options.default_ttl_ms);
  broker::DurableQueues::Confirm done;
  if (msg.ack_id) {
    done = [endpoint, ack_id = *msg.ack_id](size_t stored, const Status& status) {
      endpoint->send(ack_frames(ack_id, confirm_reply(stored, status)));
    };
  }
  ctx.queues.enqueue(std::move(message), std::move(copies), std::move(done));
}

void on_produce(Context& ctx, net::Socket& socket, const net::Message& msg) {
  std::string storage;
  auto object = request(socket, msg, storage);
  if (!object) return;
  produce(ctx, socket, msg, *object, {msg.attachments.begin(), msg.attachments.end()});
}

// ACK (§3.7): every outcome goes out as ACK_OK / ACK_FAIL and to the ack callback, if there is one.
void on_ack(Context& ctx, net::Socket& socket, const net::Message& msg) {
  auto endpoint = endpoint_of(socket);
  auto answer = [endpoint, ack_id = msg.ack_id](int code, const std::string& id, const std::string& message) {
    std::string payload;
    if (code == 200) {
      payload = "{\"ok\":true,\"msgId\":";
      sio::append_json_string(payload, id);
      payload.push_back('}');
    } else {
      payload = error_reply(code, message);
    }
    endpoint->send(event_frames(code == 200 ? "ACK_OK" : "ACK_FAIL", payload));
    if (ack_id) endpoint->send(ack_frames(*ack_id, "[" + payload + "]"));
  };
  std::string storage;
  auto object = request_object(msg.json, storage);
  auto id = object ? parse_ack(*object) : Result<std::string>(make_error("Invalid ACK JSON", 400));
  if (!id) return answer(400, "", id.error().message);
  ctx.queues.ack(kRealm, socket.id(), *id, [answer, id = *id](int code, const std::string& message) {
    answer(code, id, message);
  });
}

// PRODUCE_CHUNK (§3.6): pieces of a PRODUCE's JSON, joined in index order once `total` have arrived.
void on_produce_chunk(Context& ctx, net::Socket& socket, const net::Message& msg) {
  std::string storage;
  auto object = request(socket, msg, storage);
  if (!object) return;
  auto chunk = parse_produce_chunk(*object);
  if (!chunk) return reply_error(socket, msg, chunk.error());
  const std::string& transfer = chunk->transfer_id;
  std::string& data = chunk->data;
  auto endpoint = endpoint_of(socket);
  auto& t = endpoint->transfers[transfer];
  if (endpoint->transfer_bytes + data.size() > kMaxChunkedBytesPerSocket) {
    endpoint->transfer_bytes -= t.bytes;
    endpoint->transfers.erase(transfer);
    return reply_error(socket, msg, Error{kMalformedRequest, "PRODUCE_CHUNK: too much chunked data in flight; transfer dropped"});
  }
  t.total = chunk->total;
  auto& piece = t.pieces[chunk->index];
  // A repeated index replaces its piece (the reference would count it twice).
  t.bytes += data.size() - piece.size();
  endpoint->transfer_bytes += data.size() - piece.size();
  piece = std::move(data);
  if (t.pieces.size() < t.total) {
    // A piece sent with an ack id is answered at once; the last one gets the PRODUCE's own answer.
    if (msg.ack_id)
      socket.ack(*msg.ack_id, "[{\"ok\":true,\"received\":" + std::to_string(t.pieces.size()) +
                                  ",\"total\":" + std::to_string(t.total) + "}]");
    return;
  }
  std::string joined;
  joined.reserve(t.bytes);
  for (auto& [i, p] : t.pieces) joined += p;
  endpoint->transfer_bytes -= t.bytes;
  endpoint->transfers.erase(transfer);
  if (!json::object_members(joined)) return reply_error(socket, msg, Error{kMalformedRequest, "PRODUCE_CHUNK: the joined data is not a JSON object"});
  produce(ctx, socket, msg, joined, {});
}

void on_subscribe(Context& ctx, net::Socket& socket, const net::Message& msg) {
  std::string storage;
  auto object = request(socket, msg, storage);
  if (!object) return;
  auto r = parse_subscribe(*object);
  if (!r) return reply_error(socket, msg, r.error());
  broker::SubscribeSpec spec;
  spec.event = r->event;
  spec.producer = r->producer;
  spec.consumer = r->consumer;
  spec.id = r->id.value_or(socket.id());
  spec.consumer_id = r->consumer_id.value_or(spec.id);
  spec.topic = r->mode == "topic";
  spec.group = r->group;
  spec.policy = delivery_policy(*r);
  spec.durable = r->durable || spec.policy.ack;  // §0 row 2: ACK mode without durable counts as durable
  auto endpoint = endpoint_of(socket);
  auto [key, notices] = ctx.broker.with_realm(kRealm, [&](broker::Realm& realm) {
    auto out = realm.subscribe(spec, endpoint);
    // A durable subscription is stored (§0 row 6); a re-subscription without `durable` forgets it.
    if (spec.durable) ctx.queues.save_subscription(kRealm, spec);
    else ctx.queues.remove_subscription(kRealm, spec, false);
    // Every SUBSCRIBE replays what is stored for (realm, key, consumer_id) (§5.4). Posted under the
    // realm's lock: any message routed to the new subscription reaches the queue after the replay.
    ctx.queues.replay({kRealm, out.first, spec.consumer_id, spec.consumer, spec.policy}, endpoint);
    return out;
  });
  send_notices(notices);
}

// UNSUBSCRIBE (§0 row 4): a key string, or {event, producer, consumer}.
void on_unsubscribe(Context& ctx, net::Socket& socket, const net::Message& msg) {
  auto elements = json::array_elements(msg.json);
  if (!elements || elements->size() < 2) return reply_error(socket, msg, Error{kMalformedRequest, "UNSUBSCRIBE: missing payload"});
  std::string key;
  std::string consumer;
  std::string_view payload = (*elements)[1];
  std::string storage;
  auto object = payload.front() == '{' ? std::optional<std::string_view>(payload) : std::nullopt;
  if (!object && payload.front() == '"') {
    auto text = json::unescape(payload);
    if (text && !text->empty() && text->front() == '{') {
      storage = std::move(*text);
      object = storage;
    } else if (text) {
      key = broker::lower(*text);
    }
  }
  if (object) {
    auto r = parse_subscribe(*object);
    if (!r) return reply_error(socket, msg, r.error());
    key = broker::subscription_key(r->producer, r->event);
    consumer = r->consumer;
  }
  if (key.empty()) return reply_error(socket, msg, Error{kMalformedRequest, "UNSUBSCRIBE: payload must be a key or {event, producer, consumer}"});
  auto endpoint = endpoint_of(socket);
  auto removed = ctx.broker.with_realm(kRealm, [&](broker::Realm& realm) {
    if (consumer.empty()) return realm.unsubscribe_all_of(key, endpoint);
    std::vector<broker::SubscribeSpec> out;
    if (auto spec = realm.unsubscribe(key, consumer)) out.push_back(std::move(*spec));
    return out;
  });
  // A durable subscription takes its queue with it (§0 row 4).
  for (auto& spec : removed) {
    if (spec.durable) ctx.queues.remove_subscription(kRealm, std::move(spec), true);
  }
}

}  // namespace

std::unique_ptr<broker::DeliverySink> make_tyo_mq_sink() {
  // Stored copies go out as CONSUME-<key>, in CONSUME_CHUNK pieces when they are long (§4.2).
  class Sink : public broker::DeliverySink {
    void deliver(const broker::EndpointPtr& to, const std::string& key, const std::string& payload,
                 const std::vector<std::string>& attachments) override {
      send_all(to, delivery_frames("CONSUME-" + key, payload, attachments));
    }
  };
  return std::make_unique<Sink>();
}

void register_tyo_mq(net::SioServer& sio, broker::Broker& broker, broker::DurableQueues& queues, TyoMqOptions options) {
  auto ctx = std::make_shared<Context>(Context{broker, queues, options});
  net::Namespace ns;
  ns.name = "/";
  // PING: the ack callback receives the JSON *string* of the payload plus pong and timestamp (§3.8).
  ns.handlers["PING"] = [](net::Socket& socket, const net::Message& msg) {
    if (!msg.ack_id) return;
    std::string reply = ping_reply(msg.json, iso_timestamp(std::chrono::system_clock::now()));
    std::string args = "[";
    sio::append_json_string(args, reply);
    args.push_back(']');
    socket.ack(*msg.ack_id, args);
  };
  ns.handlers["PRODUCER"] = [&broker](net::Socket& socket, const net::Message& msg) {
    auto reg = registration(socket, msg, "producer");
    if (!reg) return;
    auto endpoint = endpoint_of(socket);
    send_notices(broker.with_realm(kRealm, [&](broker::Realm& realm) {
      return realm.register_producer(reg->name, reg->id, endpoint, reg->default_ttl_ms);
    }));
  };
  ns.handlers["CONSUMER"] = [&broker](net::Socket& socket, const net::Message& msg) {
    auto reg = registration(socket, msg, "consumer");
    if (!reg) return;
    auto endpoint = endpoint_of(socket);
    auto notices = broker.with_realm(
        kRealm, [&](broker::Realm& realm) { return realm.register_consumer(reg->name, reg->id, endpoint); });
    if (!notices) {
      // The name is held by another live connection: the newcomer is told and dropped (§3.2).
      socket.emit("ERROR", error_object(-3, "Duplicate consumer name: " + reg->name));
      socket.disconnect(true);
      return;
    }
    send_notices(*notices);
  };
  ns.handlers["SUBSCRIBE"] = [ctx](net::Socket& s, const net::Message& m) { on_subscribe(*ctx, s, m); };
  ns.handlers["UNSUBSCRIBE"] = [ctx](net::Socket& s, const net::Message& m) { on_unsubscribe(*ctx, s, m); };
  ns.handlers["PRODUCE"] = [ctx](net::Socket& s, const net::Message& m) { on_produce(*ctx, s, m); };
  ns.handlers["PRODUCE_CHUNK"] = [ctx](net::Socket& s, const net::Message& m) { on_produce_chunk(*ctx, s, m); };
  ns.handlers["ACK"] = [ctx](net::Socket& s, const net::Message& m) { on_ack(*ctx, s, m); };
  // QUIT: the payload must be the socket's own id; the server then disconnects it.
  ns.handlers["QUIT"] = [](net::Socket& socket, const net::Message& msg) {
    auto args = json::array_elements(msg.json);
    if (args && args->size() >= 2 && json::unescape((*args)[1]).value_or("") == socket.id()) return socket.disconnect(true);
    reply_error(socket, msg, Error{kMalformedRequest, "QUIT: the payload must be this socket's id"});
  };
  // HELLO and DEBUG are logged only.
  ns.handlers["HELLO"] = [](net::Socket& socket, const net::Message& msg) {
    std::string storage;
    auto object = request(socket, msg, storage);
    if (!object) return;
    spdlog::info("HELLO from {} ({}): {}", socket.id(), socket.remote_address(), *object);
  };
  ns.handlers["DEBUG"] = [](net::Socket& socket, const net::Message& msg) {
    spdlog::debug("DEBUG from {}: {}", socket.id(), msg.json);
  };
  ns.on_disconnect = [ctx](net::Socket& socket, std::string_view) {
    auto endpoint = socket.state<SocketEndpoint>();
    if (!endpoint) return;  // never registered anything
    send_notices(ctx->broker.with_realm(kRealm, [&](broker::Realm& realm) { return realm.disconnect(endpoint); }));
    // Its ACK timers stop; what it had in flight stays stored for the next replay (§4.7).
    ctx->queues.socket_closed(socket.id());
  };
  sio.add_namespace(std::move(ns));
}

}  // namespace siomq::surfaces
