#include "surfaces/tyo_mq_surface.h"

#include <boost/asio/post.hpp>
#include <spdlog/spdlog.h>

#include <map>

#include "broker/broker.h"
#include "net/engine_session.h"
#include "net/sio_server.h"
#include "net/worker_pool.h"
#include "surfaces/ping.h"
#include "surfaces/tyo_mq_requests.h"
#include "wire/json_spans.h"
#include "wire/socketio.h"

namespace siomq::surfaces {
namespace {

const std::string kRealm = "default";  // until the auth issue brings realms

// A socket as the broker sees it; `send` may be called from any worker.
class SocketEndpoint : public broker::Endpoint {
 public:
  explicit SocketEndpoint(net::Socket& socket)
      : worker_(socket.session().worker()), socket_(socket.weak_from_this()), id_(socket.id()) {}
  const std::string& socket_id() const override { return id_; }

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

std::shared_ptr<SocketEndpoint> endpoint_of(net::Socket& socket) {
  auto e = socket.state<SocketEndpoint>();
  if (!e) {
    e = std::make_shared<SocketEndpoint>(socket);
    socket.set_state(e);
  }
  return e;
}

std::shared_ptr<const std::vector<net::OutFrame>> event_frames(std::string_view event, std::string_view payload,
                                                               std::vector<std::string> attachments = {}) {
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

// ERROR to the socket (§0 row 1), and {ok:false, code:400, message} to its ack callback if it asked.
void reply_error(net::Socket& socket, const net::Message& msg, const Error& error) {
  if (error.message == "Message name should be a object") {
    std::string bare;
    sio::append_json_string(bare, error.message);
    socket.emit("ERROR", bare);  // the reference sends this one as a bare string
  } else {
    socket.emit("ERROR", error_object(error.code, error.message));
  }
  if (msg.ack_id) {
    std::string ack = "[{\"ok\":false,\"code\":400,\"message\":";
    sio::append_json_string(ack, error.message);
    ack += "}]";
    socket.ack(*msg.ack_id, ack);
  }
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

// A registration's name and id (§3.1, §3.2): name must be a string; id defaults to the socket id.
std::optional<std::pair<std::string, std::string>> registration(net::Socket& socket, const net::Message& msg,
                                                                std::string_view what) {
  std::string storage;
  auto object = request(socket, msg, storage);
  if (!object) return std::nullopt;
  auto members = json::object_members(*object);
  std::string_view name_raw, id_raw;
  for (const auto& m : *members) {
    if (m.key == "name") name_raw = m.value;
    if (m.key == "id") id_raw = m.value;
  }
  auto name = name_raw.empty() || name_raw.front() != '"' ? Result<std::string>(make_error("")) : json::unescape(name_raw);
  if (!name) {
    reply_error(socket, msg, Error{-1, "Incorrect " + std::string(what) + "'s name"});
    return std::nullopt;
  }
  std::string id = socket.id();
  if (!id_raw.empty() && id_raw.front() == '"') {
    if (auto v = json::unescape(id_raw); v && !v->empty()) id = *v;
  }
  return std::make_pair(std::move(*name), std::move(id));
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

void on_produce(broker::Broker& broker, net::Socket& socket, const net::Message& msg) {
  std::string storage;
  auto object = request(socket, msg, storage);
  if (!object) return;
  auto p = parse_produce(*object);
  if (!p) return reply_error(socket, msg, p.error());
  auto endpoint = endpoint_of(socket);
  auto routes = broker.with_realm(kRealm, [&](broker::Realm& realm) {
    realm.bind_sender(p->from, p->id, endpoint);
    return realm.route(p->event, p->from);
  });
  if (routes.empty()) return;
  // One encoding per subscription key, shared by every consumer under it.
  std::string payload = delivery_payload(*p);
  std::vector<std::string> attachments(msg.attachments.begin(), msg.attachments.end());
  std::map<std::string, std::shared_ptr<const std::vector<net::OutFrame>>> frames;
  for (const auto& route : routes) {
    if (!route.endpoint) continue;  // offline: durable queues come with the durable engine
    auto& f = frames[route.key];
    if (!f) f = event_frames("CONSUME-" + route.key, payload, attachments);
    std::static_pointer_cast<SocketEndpoint>(route.endpoint)->send(f);
  }
}

void on_subscribe(broker::Broker& broker, net::Socket& socket, const net::Message& msg) {
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
  spec.durable = r->durable;
  spec.ack = r->ack;
  auto endpoint = endpoint_of(socket);
  auto [key, notices] =
      broker.with_realm(kRealm, [&](broker::Realm& realm) { return realm.subscribe(spec, endpoint); });
  send_notices(notices);
}

// UNSUBSCRIBE (§0 row 4): a key string, or {event, producer, consumer}.
void on_unsubscribe(broker::Broker& broker, net::Socket& socket, const net::Message& msg) {
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
  broker.with_realm(kRealm, [&](broker::Realm& realm) {
    if (!consumer.empty()) return realm.unsubscribe(key, consumer);
    return realm.unsubscribe_all_of(key, endpoint);
  });
}

}  // namespace

void register_tyo_mq(net::SioServer& sio, broker::Broker& broker) {
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
    send_notices(broker.with_realm(
        kRealm, [&](broker::Realm& realm) { return realm.register_producer(reg->first, reg->second, endpoint); }));
  };
  ns.handlers["CONSUMER"] = [&broker](net::Socket& socket, const net::Message& msg) {
    auto reg = registration(socket, msg, "consumer");
    if (!reg) return;
    auto endpoint = endpoint_of(socket);
    auto notices = broker.with_realm(
        kRealm, [&](broker::Realm& realm) { return realm.register_consumer(reg->first, reg->second, endpoint); });
    if (!notices) {
      // The name is held by another live connection: the newcomer is told and dropped (§3.2).
      socket.emit("ERROR", error_object(-3, "Duplicate consumer name: " + reg->first));
      socket.disconnect(true);
      return;
    }
    send_notices(*notices);
  };
  ns.handlers["SUBSCRIBE"] = [&broker](net::Socket& s, const net::Message& m) { on_subscribe(broker, s, m); };
  ns.handlers["UNSUBSCRIBE"] = [&broker](net::Socket& s, const net::Message& m) { on_unsubscribe(broker, s, m); };
  ns.handlers["PRODUCE"] = [&broker](net::Socket& s, const net::Message& m) { on_produce(broker, s, m); };
  ns.on_disconnect = [&broker](net::Socket& socket, std::string_view) {
    auto endpoint = socket.state<SocketEndpoint>();
    if (!endpoint) return;  // never registered anything
    send_notices(broker.with_realm(kRealm, [&](broker::Realm& realm) { return realm.disconnect(endpoint); }));
  };
  sio.add_namespace(std::move(ns));
}

}  // namespace siomq::surfaces
