// The guaranteed-message history that SSE streams resume from (tyo-mq §9's `__http_sse__` window): per
// (realm, event) the latest guaranteed messages as ready frames, at most `max_messages` and `max_bytes`
// per event (oldest dropped first), and at most `max_events` (realm, event) windows in all (the least
// recently written dropped first), holding at most `max_total_bytes` together (whole windows dropped,
// least recently written first).
//
// Kept in memory (see docs/protocol-notes.md, "HTTP publish"): it does not survive a restart.
// Thread-safe (one mutex, no callback under it).
#pragma once

#include <cstddef>
#include <deque>
#include <list>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace siomq::surfaces::http {

struct HistoryLimits {
  size_t max_messages = 1000;
  size_t max_bytes = 4 * 1024 * 1024;
  size_t max_events = 10000;
  size_t max_total_bytes = 64 * 1024 * 1024;  // every window together
};

struct Replay {
  std::vector<std::pair<std::string, std::string>> frames;  // (id, frame), oldest first
  bool truncated = false;  // the window had dropped messages and `since` was not in it
};

class SseHistory {
 public:
  explicit SseHistory(HistoryLimits limits) : limits_(limits) {}
  void record(const std::string& realm, std::string_view event, std::string id, std::string frame);
  // The frames after `since`; all of the window when `since` is not in it.
  Replay after(const std::string& realm, const std::string& event, std::string_view since);
  size_t events() const;

 private:
  struct Window {
    std::deque<std::pair<std::string, std::string>> frames;
    size_t bytes = 0;
    bool dropped = false;
    std::list<std::pair<std::string, std::string>>::iterator lru;
  };
  HistoryLimits limits_;
  mutable std::mutex mu_;
  std::map<std::pair<std::string, std::string>, Window> windows_;
  std::list<std::pair<std::string, std::string>> lru_;  // most recently written last
  size_t total_bytes_ = 0;
};

}  // namespace siomq::surfaces::http
