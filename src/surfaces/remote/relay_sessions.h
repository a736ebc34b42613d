// The sessions of the relay namespaces: how many agents and viewers each (namespace, realm, session id)
// holds, so that joining one is bounded (agents and viewers per session, sessions per namespace), and the
// names of its two rooms. A session exists while a peer is in it. Sessions of different realms or
// namespaces never share a room, whatever their ids.
//
// Thread-safe (one mutex, taken on auth and on disconnect, never per relayed event).
#pragma once

#include <cstddef>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <tuple>

#include "surfaces/remote/relay_rules.h"
#include "surfaces/remote/relay_settings.h"
#include "wire/result.h"

namespace siomq::remote {

struct SessionKey {
  std::string nsp, realm, session_id;
  auto operator<=>(const SessionKey&) const = default;
};

// The Socket.IO room of one side of a session. The parts are length-prefixed, so no choice of realm or
// session id can name another session's room; rooms are per namespace anyway.
std::string room_of(const SessionKey& key, Role side);

class RelaySessions {
 public:
  // Counts a peer of `role` into the session; an error (code 429) past `limits`.
  Status join(const SessionKey& key, Role role, const RelayLimits& limits);
  // Counts it out; the session ends with its last peer.
  void leave(const SessionKey& key, Role role);
  // Sessions of `nsp` with a peer in them.
  size_t sessions(std::string_view nsp) const;

 private:
  struct Count {
    size_t agents = 0, viewers = 0;
  };
  mutable std::mutex mu_;
  std::map<SessionKey, Count> sessions_;
  std::map<std::string, size_t, std::less<>> per_namespace_;
};

}  // namespace siomq::remote
