// The guaranteed-message history that SSE streams resume from (tyo-mq §9's `__http_sse__` window): per
// (realm, event) the latest guaranteed messages as ready frames, at most `max_messages` and `max_bytes`
// per event (oldest dropped first), and at most `max_events` (realm, event) windows in all (the least
// recently written dropped first), holding at most `max_total_bytes` together (whole windows dropped,
// least recently written first).
//
// Durability: each window is a capped log in the store's stream log family (store/stream_log.h), the
// reserved stream "$SSE:<byte length of realm>:<realm>:<event>" (bus stream names cannot begin with
// '$'), one record per message: seq from one counter for every window (so a window dropped and made
// again never reuses a seq), subject the event, msg_id the frame's id, the frame as bytes, and headers
// {"cut":true} once the window has dropped messages (the truncation comment survives a restart). A
// record() writes the message and erases what the caps dropped in one submission to the store writer;
// its `done` runs once that is on disk (or failed), on the writer thread; while more than
// max_unwritten_bytes wait for the writer it refuses at once and keeps nothing. load() rebuilds the
// windows at start-up (also while http_publish is off: they are bounded by the same caps), so a restart
// keeps the history. A failed write is logged; the message stays in the in-memory window.
//
// Threading: any thread; one mutex, held for bookkeeping and the writer's submit only (so the store sees
// the windows' changes in the order they were made). Callbacks run on the writer thread without it.
// The writer must outlive the history's last callback (stop the writer first).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <list>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "store/op.h"
#include "store/stream_log.h"
#include "wire/result.h"

namespace siomq::store {
class Writer;
}

namespace siomq::surfaces::http {

struct HistoryLimits {
  size_t max_messages = 1000;
  size_t max_bytes = 4 * 1024 * 1024;
  size_t max_events = 10000;
  size_t max_total_bytes = 64 * 1024 * 1024;  // every window together
  // Frames handed to the store writer and not written yet: past this a record() is refused (503).
  size_t max_unwritten_bytes = 64 * 1024 * 1024;
};

struct Replay {
  std::vector<std::pair<std::string, std::string>> frames;  // (id, frame), oldest first
  bool truncated = false;  // the window had dropped messages and `since` was not in it
};

// The stream of the (realm, event) window, and back; nullopt for a stream that is not a window's.
std::string history_stream(std::string_view realm, std::string_view event);
std::optional<std::pair<std::string, std::string>> history_window_of(std::string_view stream);

class SseHistory {
 public:
  using Done = std::function<void(const Status&)>;

  SseHistory(store::Writer& writer, HistoryLimits limits);
  SseHistory(const SseHistory&) = delete;
  SseHistory& operator=(const SseHistory&) = delete;

  // At start-up, before any record(): the windows in `messages` (the stream log in (stream, seq) order;
  // the streams of others are left alone). Returns the ops that erase what the limits no longer hold.
  std::vector<store::Op> load(const std::vector<store::StreamMessage>& messages);
  // Keeps the message and writes it; `done` as above. False, and nothing kept, while more than
  // max_unwritten_bytes wait for the writer (the store is behind): the caller refuses the message.
  bool record(const std::string& realm, std::string_view event, std::string id, std::string frame, Done done = {});
  // A removed realm's windows go, in memory and in the store (a realm made again later starts empty).
  void purge_realm(const std::string& realm);
  // The frames after `since`; all of the window when `since` is not in it.
  Replay after(const std::string& realm, const std::string& event, std::string_view since) const;
  size_t events() const;
  // For a move to another store: appends every window's records to `ops` and calls `commit` with them,
  // holding the lock, so no record() reaches the old store after the snapshot.
  void move_along(std::vector<store::Op> ops, const std::function<void(std::vector<store::Op>)>& commit);

 private:
  struct Frame {
    uint64_t seq;
    std::string id, frame;
    int64_t time_ms;
  };
  using Key = std::pair<std::string, std::string>;  // (realm, event)
  struct Window {
    std::deque<Frame> frames;
    size_t bytes = 0;
    bool dropped = false;
    std::list<Key>::iterator lru;
  };
  using Windows = std::map<Key, Window>;

  Windows::iterator window(const Key& key);
  void trim(const Key& key, Window& w, std::vector<store::Op>& ops);
  void evict(Windows::iterator it, std::vector<store::Op>& ops);
  void evict_past_limits(std::vector<store::Op>& ops);

  store::Writer& writer_;
  const HistoryLimits limits_;
  mutable std::mutex mu_;
  Windows windows_;
  std::list<Key> lru_;  // most recently written last
  size_t total_bytes_ = 0;
  uint64_t next_seq_ = 1;  // shared by every window
  std::atomic<size_t> unwritten_{0};  // bytes of frames submitted and not written yet
};

}  // namespace siomq::surfaces::http
