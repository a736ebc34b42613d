#include "net/sio_server.h"

#include <boost/asio/post.hpp>
#include <spdlog/spdlog.h>

#include <exception>
#include <stdexcept>

#include "net/engine_server.h"
#include "net/engine_session.h"
#include "net/http_request.h"
#include "net/worker_pool.h"
#include "wire/json_outline.h"
#include "wire/log_text.h"

namespace siomq::net {
namespace {

// "/chat?a=1&b=2" -> {"/chat", "{\"a\":\"1\",\"b\":\"2\"}"}; without a query the auth is empty.
std::pair<std::string, std::string> split_v3_namespace(std::string_view nsp) {
  size_t q = nsp.find('?');
  if (q == std::string_view::npos) return {std::string(nsp), {}};
  Target target = parse_target(nsp);
  std::string auth = "{";
  for (const auto& [k, v] : target.query) {
    if (auth.size() > 1) auth.push_back(',');
    sio::append_json_string(auth, k);
    auth.push_back(':');
    sio::append_json_string(auth, v);
  }
  auth.push_back('}');
  return {std::string(nsp.substr(0, q)), auth};
}

}  // namespace

SioServer::SioServer(WorkerPool& pool) : pool_(pool), workers_(pool.size()) {}

void SioServer::add_namespace(Namespace ns) {
  std::string name = ns.name;
  namespaces_.insert_or_assign(std::move(name), std::move(ns));
}

void SioServer::add_handler(std::string_view nsp, std::string event, std::function<void(Socket&, const Message&)> handler) {
  auto it = namespaces_.find(std::string(nsp));
  if (it == namespaces_.end()) throw std::logic_error("add_handler: no namespace " + std::string(nsp));
  it->second.handlers[std::move(event)] = std::move(handler);
}

void SioServer::add_connect_hook(std::string_view nsp, std::function<void(Socket&, std::string_view)> hook) {
  auto it = namespaces_.find(std::string(nsp));
  if (it == namespaces_.end()) throw std::logic_error("add_connect_hook: no namespace " + std::string(nsp));
  it->second.on_connect = [own = std::move(it->second.on_connect), hook = std::move(hook)](
                              Socket& socket, std::string_view auth) -> std::optional<std::string> {
    if (own) {
      if (auto refused = own(socket, auth)) return refused;
    }
    hook(socket, auth);
    return std::nullopt;
  };
}

void SioServer::add_disconnect_hook(std::string_view nsp, std::function<void(Socket&, std::string_view)> hook) {
  auto it = namespaces_.find(std::string(nsp));
  if (it == namespaces_.end()) throw std::logic_error("add_disconnect_hook: no namespace " + std::string(nsp));
  it->second.on_disconnect = [own = std::move(it->second.on_disconnect), hook = std::move(hook)](
                                 Socket& socket, std::string_view reason) {
    if (own) own(socket, reason);
    hook(socket, reason);
  };
}

void SioServer::set_fallback_namespace(Namespace ns) { fallback_ = std::move(ns); }

const Namespace* SioServer::find_namespace(std::string_view name) const {
  auto it = namespaces_.find(std::string(name));
  if (it != namespaces_.end()) return &it->second;
  return fallback_ ? &*fallback_ : nullptr;
}

std::unique_ptr<SessionHandler> SioServer::make_connection(EngineSession& session) {
  return std::make_unique<SioConnection>(*this, session);
}

void SioServer::room_join(Socket& socket, const std::string& room) {
  workers_[socket.session().worker().index()].rooms[socket.nsp()][room].insert(&socket);
}

void SioServer::room_leave(Socket& socket, const std::string& room) {
  auto& rooms = workers_[socket.session().worker().index()].rooms;
  auto ns = rooms.find(socket.nsp());
  if (ns == rooms.end()) return;
  auto r = ns->second.find(room);
  if (r == ns->second.end()) return;
  r->second.erase(&socket);
  if (r->second.empty()) ns->second.erase(r);
}

void SioServer::emit_to_room(const std::string& nsp, const std::string& room, std::string_view json_array,
                             std::vector<std::string> attachments, std::string except) {
  // Encoded once; every worker sends the same frames to its own members of the room.
  auto frames = std::make_shared<const std::vector<OutFrame>>(
      encode_event(nsp, std::nullopt, false, json_array, std::move(attachments)));
  for (size_t i = 0; i < pool_.size(); ++i) {
    boost::asio::post(pool_.at(i).io(), [this, i, nsp, room, frames, except] {
      auto& rooms = workers_[i].rooms;
      auto ns = rooms.find(nsp);
      if (ns == rooms.end()) return;
      auto r = ns->second.find(room);
      if (r == ns->second.end()) return;
      for (Socket* s : r->second) {
        if (except.empty() || s->id() != except) s->send_frames(*frames);
      }
    });
  }
}

SioConnection::SioConnection(SioServer& server, EngineSession& session)
    : server_(server), session_(session), decoder_(session.options().max_payload) {}

SioConnection::~SioConnection() = default;

void SioConnection::send(OutFrame frame) { session_.send(std::move(frame)); }

void SioConnection::on_open() {
  // Socket.IO v2 clients (Engine.IO 3) are connected to the main namespace without asking.
  if (session_.protocol() == 3) connect("/", {});
}

bool SioConnection::on_text(std::string_view text) {
  json::Outline outline;  // read by the handler, which runs before this returns
  return decoded(decoder_.feed_text(text, &outline), &outline);
}

bool SioConnection::on_binary(std::string bytes) { return decoded(decoder_.feed_binary(std::move(bytes))); }

bool SioConnection::decoded(Result<std::optional<sio::Packet>> r, const json::Outline* outline) {
  if (!r) {
    spdlog::info("session {} ({}): bad Socket.IO packet: {}", session_.sid(), session_.remote_address(),
                 r.error().message);
    return false;
  }
  if (!r->has_value()) {
    // Attachments still to come: the first wait of a packet starts its clock (EngineSession::tick).
    if (!waiting_) awaiting_since_ = std::chrono::steady_clock::now();
    waiting_ = true;
    return true;
  }
  waiting_ = false;
  return handle(std::move(**r), outline);
}

Socket* SioConnection::find(std::string_view nsp) {
  for (auto& s : sockets_) {
    if (s->nsp() == nsp) return s.get();
  }
  return nullptr;
}

void SioConnection::connect(const std::string& nsp, std::string_view auth) {
  const bool v3 = session_.protocol() == 3;
  auto refuse = [&](std::string_view message) {
    std::string text = "4";
    std::string data;
    if (v3) {
      sio::append_json_string(data, message);
    } else {
      data = "{\"message\":";
      sio::append_json_string(data, message);
      data.push_back('}');
    }
    sio::append_text(text, sio::PacketType::kConnectError, nsp, std::nullopt, data);
    send(text_frame(std::move(text)));
  };
  const Namespace* ns = server_.find_namespace(nsp);
  if (!ns) {
    refuse("Invalid namespace");
    return;
  }
  if (find(nsp)) return;  // already connected: nothing changes
  std::string id = v3 ? (nsp == "/" ? session_.sid() : nsp + "#" + session_.sid()) : random_id();
  auto socket = std::make_shared<Socket>(*this, nsp, std::move(id));
  if (ns->on_connect) {
    if (auto error = ns->on_connect(*socket, auth)) {
      refuse(*error);
      return;
    }
  }
  Socket& s = *socket;
  sockets_.push_back(std::move(socket));
  s.connected_ = true;
  ever_joined_ = true;
  std::string text = "4";
  std::string data;
  if (!v3) {
    data = "{\"sid\":";
    sio::append_json_string(data, s.id());
    data.push_back('}');
  }
  sio::append_text(text, sio::PacketType::kConnect, nsp, std::nullopt, data);
  send(text_frame(std::move(text)));
}

bool SioConnection::handle(sio::Packet&& packet, const json::Outline* outline) {
  using sio::PacketType;
  if (packet.type == PacketType::kConnect) {
    if (session_.protocol() == 3) {
      // Socket.IO v2 clients put their query in the namespace ("/chat?token=x"); it is their auth payload.
      auto [nsp, auth] = split_v3_namespace(packet.nsp);
      connect(nsp, auth);
    } else {
      connect(packet.nsp, packet.data);
    }
    return true;
  }
  Socket* socket = find(packet.nsp);
  if (!socket) {
    // Anything but CONNECT for a namespace this client has not joined is a protocol violation.
    spdlog::info("session {} ({}): packet for unjoined namespace {}", session_.sid(), log_text(session_.remote_address()),
                 log_text(packet.nsp));
    return false;
  }
  switch (packet.type) {
    case PacketType::kDisconnect:
      remove(*socket, "client namespace disconnect");
      return true;
    case PacketType::kEvent:
    case PacketType::kBinaryEvent: {
      const Namespace* ns = server_.find_namespace(packet.nsp);
      Message msg{packet.event, packet.data, packet.attachments, packet.id, outline};
      auto it = ns->handlers.find(packet.event);
      const auto* handler = it != ns->handlers.end() ? &it->second : ns->on_other ? &ns->on_other : nullptr;
      if (!handler) return true;
      try {
        (*handler)(*socket, msg);
      } catch (const std::exception& e) {
        // A handler bug must not take the connection or the server down; it is logged loudly instead.
        spdlog::error("handler for {} on {} threw: {}", log_text(packet.event), log_text(packet.nsp), e.what());
      }
      return true;
    }
    case PacketType::kAck:
    case PacketType::kBinaryAck:
      // The server asks for no acks yet; an ack from the client is ignored.
      return true;
    default:
      return false;
  }
}

void SioConnection::remove(Socket& socket, std::string_view reason) {
  for (auto it = sockets_.begin(); it != sockets_.end(); ++it) {
    if (it->get() != &socket) continue;
    std::shared_ptr<Socket> owned = std::move(*it);
    sockets_.erase(it);
    std::vector<std::string> rooms(owned->rooms().begin(), owned->rooms().end());
    for (const auto& r : rooms) owned->leave(r);
    owned->connected_ = false;
    const Namespace* ns = server_.find_namespace(owned->nsp());
    if (ns && ns->on_disconnect) ns->on_disconnect(*owned, reason);
    // A handler further up the stack may still hold this socket: it is destroyed after the call
    // unwinds, and until then it is disconnected, so sends through it do nothing.
    boost::asio::post(session_.worker().io(), [dead = std::move(owned)] {});
    return;
  }
}

void SioConnection::on_close(std::string_view reason) {
  while (!sockets_.empty()) remove(*sockets_.back(), reason);
}

}  // namespace siomq::net
