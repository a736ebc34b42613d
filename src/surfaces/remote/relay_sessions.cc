#include "surfaces/remote/relay_sessions.h"

namespace siomq::remote {

std::string room_of(const SessionKey& key, Role side) {
  std::string room = "relay:";
  room += std::to_string(key.realm.size());
  room.push_back(':');
  room += key.realm;
  room += std::to_string(key.session_id.size());
  room.push_back(':');
  room += key.session_id;
  room += side == Role::agent ? ":agent" : ":viewers";
  return room;
}

Status RelaySessions::join(const SessionKey& key, Role role, const RelayLimits& limits) {
  std::lock_guard lock(mu_);
  auto it = sessions_.find(key);
  if (it == sessions_.end()) {
    auto n = per_namespace_.find(key.nsp);
    if (n != per_namespace_.end() && n->second >= limits.max_sessions)
      return make_error("Too many sessions on " + key.nsp, 429);
    it = sessions_.emplace(key, Count{}).first;
    ++per_namespace_[key.nsp];
  }
  Count& c = it->second;
  size_t& held = role == Role::agent ? c.agents : c.viewers;
  size_t cap = role == Role::agent ? limits.max_agents_per_session : limits.max_viewers_per_session;
  if (held >= cap) {
    if (c.agents + c.viewers == 0) {  // the session was made for this peer only
      sessions_.erase(it);
      if (--per_namespace_[key.nsp] == 0) per_namespace_.erase(key.nsp);
    }
    return make_error(role == Role::agent ? "Too many agents in this session" : "Too many viewers in this session", 429);
  }
  ++held;
  return Ok{};
}

void RelaySessions::leave(const SessionKey& key, Role role) {
  std::lock_guard lock(mu_);
  auto it = sessions_.find(key);
  if (it == sessions_.end()) return;
  size_t& held = role == Role::agent ? it->second.agents : it->second.viewers;
  if (held > 0) --held;
  if (it->second.agents + it->second.viewers > 0) return;
  sessions_.erase(it);
  auto n = per_namespace_.find(key.nsp);
  if (n != per_namespace_.end() && --n->second == 0) per_namespace_.erase(n);
}

size_t RelaySessions::sessions(std::string_view nsp) const {
  std::lock_guard lock(mu_);
  auto n = per_namespace_.find(nsp);
  return n == per_namespace_.end() ? 0 : n->second;
}

}  // namespace siomq::remote
