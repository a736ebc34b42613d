// The registry of live sessions (every surface's connections): which realm each is in now and which
// address it came from. What remove_realm disconnects and what the per-IP connection limits count.
//
// It holds sessions weakly: a session that is gone without remove() is skipped, never kept alive.
// Thread-safe (one mutex; no call runs user code under it).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "surfaces/session.h"

namespace siomq::surfaces {

class SessionRegistry {
 public:
  // Adds a session under its realm now and its address (`s->ip`, set before and not changed after);
  // returns how many sessions that address has now and how many it opened in the last minute (`now_ms`:
  // steady ms).
  std::pair<size_t, size_t> add(const std::shared_ptr<Session>& s, int64_t now_ms);
  // Files the session under `realm` (its grant changed realm).
  void set_realm(const Session* s, const std::string& realm);
  // Forgets a session (alive: its `ip` is read to count its address down).
  void remove(const Session* s);
  // The live sessions whose realm is `realm` now.
  std::vector<std::shared_ptr<Session>> in_realm(const std::string& realm);
  size_t size();

 private:
  // (The address is the session's own `ip`, not kept here again: one entry per connection.)
  struct Entry {
    std::weak_ptr<Session> session;
    std::string realm;
  };
  std::mutex mu_;
  std::unordered_map<const Session*, Entry> sessions_;
  std::unordered_map<std::string, size_t> per_ip_;
  std::unordered_map<std::string, std::vector<int64_t>> opened_;  // per ip, the last minute's connection times
  uint64_t adds_ = 0;
};

}  // namespace siomq::surfaces
