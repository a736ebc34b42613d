#include "surfaces/http/sse_history.h"

namespace siomq::surfaces::http {

void SseHistory::record(const std::string& realm, std::string_view event, std::string id, std::string frame) {
  std::lock_guard lock(mu_);
  auto key = std::make_pair(realm, std::string(event));
  auto it = windows_.find(key);
  if (it == windows_.end()) {
    if (windows_.size() >= limits_.max_events && !lru_.empty()) {
      auto old = windows_.find(lru_.front());
      total_bytes_ -= old->second.bytes;
      windows_.erase(old);
      lru_.pop_front();
    }
    it = windows_.emplace(key, Window{}).first;
    it->second.lru = lru_.insert(lru_.end(), key);
  } else {
    lru_.splice(lru_.end(), lru_, it->second.lru);
  }
  Window& w = it->second;
  w.bytes += id.size() + frame.size();
  total_bytes_ += id.size() + frame.size();
  w.frames.emplace_back(std::move(id), std::move(frame));
  while (w.frames.size() > limits_.max_messages || (w.bytes > limits_.max_bytes && w.frames.size() > 1)) {
    size_t n = w.frames.front().first.size() + w.frames.front().second.size();
    w.bytes -= n;
    total_bytes_ -= n;
    w.frames.pop_front();
    w.dropped = true;
  }
  // Past the total, whole windows go, least recently written first (never the one just written).
  while (total_bytes_ > limits_.max_total_bytes && lru_.size() > 1) {
    auto old = windows_.find(lru_.front());
    total_bytes_ -= old->second.bytes;
    windows_.erase(old);
    lru_.pop_front();
  }
}

Replay SseHistory::after(const std::string& realm, const std::string& event, std::string_view since) {
  std::lock_guard lock(mu_);
  Replay out;
  auto it = windows_.find({realm, event});
  if (it == windows_.end()) return out;
  const Window& w = it->second;
  size_t start = 0;
  bool found = false;
  for (size_t i = w.frames.size(); i-- > 0;) {
    if (w.frames[i].first == since) {
      start = i + 1;
      found = true;
      break;
    }
  }
  out.truncated = !found && w.dropped;
  for (size_t i = start; i < w.frames.size(); ++i) out.frames.push_back(w.frames[i]);
  return out;
}

size_t SseHistory::events() const {
  std::lock_guard lock(mu_);
  return windows_.size();
}

}  // namespace siomq::surfaces::http
