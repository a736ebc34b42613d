#include "surfaces/remote/relay_namespace.h"

#include <boost/asio/steady_timer.hpp>
#include <spdlog/spdlog.h>

#include <chrono>
#include <optional>
#include <string>

#include "auth/limits.h"
#include "net/engine_session.h"
#include "net/worker_pool.h"
#include "surfaces/remote/relay_payload.h"
#include "surfaces/tyo_mq/requests.h"
#include "wire/clock.h"
#include "wire/json_spans.h"
#include "wire/log_text.h"
#include "wire/socketio.h"

namespace siomq::remote {
namespace {

// What a relay namespace keeps per socket (net::Socket::state); touched on the socket's worker only.
struct RelayPeer {
  std::optional<SessionKey> session;  // set by a successful auth
  Role role = Role::agent;
  auth::TokenBucket events, bytes;
  int64_t rate_limited_at_ms = 0;
  std::unique_ptr<boost::asio::steady_timer> auth_timer;  // armed until auth succeeds
};

std::shared_ptr<RelayPeer> peer_of(net::Socket& socket) { return socket.state<RelayPeer>(); }

const char* role_name(Role r) { return r == Role::agent ? "agent" : "viewer"; }

std::string message_object(std::string_view message) {
  std::string out = "{\"message\":";
  sio::append_json_string(out, message);
  out.push_back('}');
  return out;
}

// auth_error {message}, then the connection closes (the reference disconnects with close=true).
void refuse_auth(net::Socket& socket, std::string_view message) {
  socket.emit("auth_error", message_object(message));
  socket.disconnect(true);
}

// A string field, or a number's text (the reference compares String(value)); nullopt when absent.
std::optional<std::string> text_field(std::string_view value) {
  if (value.empty() || value == "null") return std::nullopt;
  if (value.front() == '"') return json_spans::unescape(value).value_or("");
  return std::string(value);
}

struct AuthRequest {
  std::string ticket;
  std::optional<std::string> session_id, role;
};

std::optional<AuthRequest> parse_auth(const net::Message& msg) {
  std::string storage;
  auto object = surfaces::request_object(msg.json, storage);
  if (!object) return std::nullopt;
  auto members = json_spans::object_members(*object);
  if (!members) return std::nullopt;
  AuthRequest r;
  for (const auto& m : *members) {
    if (m.key == "ticket" && !m.value.empty() && m.value.front() == '"') r.ticket = json_spans::unescape(m.value).value_or("");
    else if (m.key == "session_id") r.session_id = text_field(m.value);
    else if (m.key == "role") r.role = text_field(m.value);
  }
  return r;
}

// Arms the unauthenticated socket's deadline: past it the socket leaves the namespace.
void arm_auth_timeout(net::Socket& socket, RelayPeer& peer, int64_t timeout_ms) {
  peer.auth_timer = std::make_unique<boost::asio::steady_timer>(socket.session().worker().io(),
                                                               std::chrono::milliseconds(timeout_ms));
  peer.auth_timer->async_wait([weak = socket.weak_from_this()](const boost::system::error_code& ec) {
    auto s = weak.lock();
    if (ec || !s || !s->connected()) return;
    auto p = peer_of(*s);
    if (!p || p->session) return;
    s->emit("auth_error", message_object("Authentication timeout"));
    s->disconnect(false);
  });
}

// The socket's event and byte buckets; RATE_LIMITED at most once a second on refusal.
bool within_rate(net::Socket& socket, RelayPeer& peer, const RelayLimits& l, size_t cost);

void on_auth(RelayContext& ctx, net::Socket& socket, const net::Message& msg) {
  auto peer = peer_of(socket);
  if (!peer) return;
  if (peer->session) {
    // Paced like relayed events: a flood of repeated auths must not buy a flood of answers.
    auto settings = ctx.settings.current();
    const RelayNamespace* ns = settings->find(socket.nsp());
    if (!ns || !within_rate(socket, *peer, ns->limits, msg.json.size())) return;
    socket.emit("auth_error", message_object("Socket is already authenticated"));
    return;
  }
  auto request = parse_auth(msg);
  if (!request || request->ticket.empty()) return refuse_auth(socket, "Invalid or expired ticket");
  auto ticket = ctx.tickets.redeem(request->ticket, steady_ms());
  if (!ticket || ticket->nsp != socket.nsp()) return refuse_auth(socket, "Invalid or expired ticket");
  if (request->session_id && *request->session_id != ticket->session_id)
    return refuse_auth(socket, "Ticket session mismatch");
  if (request->role && *request->role != role_name(ticket->role)) return refuse_auth(socket, "Ticket role mismatch");

  auto settings = ctx.settings.current();
  const RelayNamespace* ns = settings->find(socket.nsp());
  if (!ns) return refuse_auth(socket, "Invalid namespace");
  SessionKey key{socket.nsp(), ticket->realm, ticket->session_id};
  if (auto joined = ctx.sessions.join(key, ticket->role, ns->limits); !joined)
    return refuse_auth(socket, joined.error().message);
  peer->session = key;
  peer->role = ticket->role;
  peer->auth_timer.reset();  // cancels it
  socket.join(room_of(key, ticket->role));
  std::string ok = "{\"session_id\":";
  sio::append_json_string(ok, ticket->session_id);
  ok += ",\"role\":\"";
  ok += role_name(ticket->role);
  ok += "\"}";
  socket.emit("auth_ok", ok);
}

bool within_rate(net::Socket& socket, RelayPeer& peer, const RelayLimits& l, size_t cost) {
  int64_t now = steady_ms();
  const char* reason = nullptr;
  int64_t wait = peer.events.take(1, l.events_per_second, l.event_burst > 0 ? l.event_burst : 2 * l.events_per_second, now);
  if (wait) reason = "events_per_second";
  if (!wait) {
    wait = peer.bytes.take(static_cast<double>(cost), l.bytes_per_second,
                           l.bytes_burst > 0 ? l.bytes_burst : 2 * l.bytes_per_second, now);
    if (wait) reason = "bytes_per_second";
  }
  if (!wait) return true;
  if (!peer.rate_limited_at_ms || now - peer.rate_limited_at_ms >= 1000) {
    peer.rate_limited_at_ms = now;
    std::string payload = "{\"code\":429,\"reason\":\"";
    payload += reason;
    payload += "\",\"retry_after\":" + std::to_string(wait) + "}";
    socket.emit("RATE_LIMITED", payload);
  }
  return false;
}

void on_event(RelayContext& ctx, net::Socket& socket, const net::Message& msg) {
  auto peer = peer_of(socket);
  if (!peer || !peer->session) return;  // nothing is relayed before auth
  auto settings = ctx.settings.current();
  const RelayNamespace* ns = settings->find(socket.nsp());
  if (!ns) {
    // The namespace was removed from the settings: its sockets leave it at their next event.
    socket.disconnect(false);
    return;
  }
  size_t cost = msg.json.size();
  for (const auto& a : msg.attachments) cost += a.size();
  if (!within_rate(socket, *peer, ns->limits, cost)) return;
  auto decision = decide(ns->rules, msg.event, peer->role);
  if (!decision) return;
  size_t cap = decision->max_bytes ? decision->max_bytes
               : decision->binary ? ns->limits.max_frame_bytes
                                  : ns->limits.max_event_bytes;
  auto payload = relay_payload(msg.event, msg.json, msg.attachments, decision->binary, cap);
  if (!payload) {
    spdlog::debug("{} {}: {} not relayed: {}", socket.nsp(), socket.id(), log_text(msg.event), payload.error().message);
    return;
  }
  ctx.sio.emit_to_room(socket.nsp(), room_of(*peer->session, decision->to), payload->json,
                       std::move(payload->attachments), socket.id());
}

}  // namespace

net::Namespace relay_namespace(std::shared_ptr<RelayContext> ctx, std::string name) {
  net::Namespace ns;
  ns.name = std::move(name);
  ns.on_connect = [ctx](net::Socket& socket, std::string_view) -> std::optional<std::string> {
    auto settings = ctx->settings.current();
    const RelayNamespace* relay = settings->find(socket.nsp());
    if (!relay) return std::string("Invalid namespace");
    auto peer = std::make_shared<RelayPeer>();
    arm_auth_timeout(socket, *peer, relay->limits.auth_timeout_ms);
    socket.set_state(std::move(peer));
    return std::nullopt;
  };
  ns.handlers["auth"] = [ctx](net::Socket& socket, const net::Message& msg) { on_auth(*ctx, socket, msg); };
  ns.on_other = [ctx](net::Socket& socket, const net::Message& msg) { on_event(*ctx, socket, msg); };
  ns.on_disconnect = [ctx](net::Socket& socket, std::string_view) {
    auto peer = peer_of(socket);
    if (!peer) return;
    peer->auth_timer.reset();
    if (peer->session) ctx->sessions.leave(*peer->session, peer->role);
    peer->session.reset();
  };
  return ns;
}

}  // namespace siomq::remote
