#include "surfaces/http/sse_history.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <charconv>

#include "store/writer.h"
#include "wire/clock.h"
#include "wire/log_text.h"

namespace siomq::surfaces::http {
namespace {

constexpr std::string_view kStreamPrefix = "$SSE:";
// The headers of a record written to a window that had dropped messages: at load, a window holding one
// says the replay is cut (the dropped records are gone, so only a survivor can say it).
constexpr std::string_view kCutHeaders = R"({"cut":true})";

size_t frame_bytes(std::string_view id, std::string_view frame) { return id.size() + frame.size(); }

store::StreamMessage stored(const std::string& stream, std::string_view event, uint64_t seq, const std::string& id,
                            const std::string& frame, int64_t time_ms, bool cut) {
  store::StreamMessage m;
  m.stream = stream;
  m.seq = seq;
  m.subject = std::string(event);
  if (cut) m.headers = std::string(kCutHeaders);
  m.payload_format = store::StreamMessage::Payload::bytes;
  m.payload = frame;
  m.time_ms = time_ms;
  m.msg_id = id;
  return m;
}

}  // namespace

// The realm's length first: realm and event may hold any byte, ':' included, and the name must say
// which bytes are which.
std::string history_stream(std::string_view realm, std::string_view event) {
  std::string s(kStreamPrefix);
  s.append(std::to_string(realm.size())).append(":").append(realm).append(":").append(event);
  return s;
}

std::optional<std::pair<std::string, std::string>> history_window_of(std::string_view stream) {
  if (!stream.starts_with(kStreamPrefix)) return std::nullopt;
  stream.remove_prefix(kStreamPrefix.size());
  size_t n = 0;
  const char* last = stream.data() + std::min<size_t>(stream.size(), 12);
  auto [end, ec] = std::from_chars(stream.data(), last, n);
  if (ec != std::errc() || end == stream.data() || end == last || *end != ':') return std::nullopt;
  stream.remove_prefix(static_cast<size_t>(end - stream.data()) + 1);
  if (stream.size() < n + 1 || stream[n] != ':') return std::nullopt;
  return std::make_pair(std::string(stream.substr(0, n)), std::string(stream.substr(n + 1)));
}

SseHistory::SseHistory(store::Writer& writer, HistoryLimits limits) : writer_(writer), limits_(limits) {}

std::vector<store::Op> SseHistory::load(const std::vector<store::StreamMessage>& messages) {
  std::lock_guard lock(mu_);
  std::vector<store::Op> ops;
  // (last write, window), for the LRU order; a window's messages are contiguous in `messages`, so the
  // window being read is always the last entry.
  std::vector<std::pair<int64_t, Key>> written;
  for (const auto& m : messages) {
    auto key = history_window_of(m.stream);
    if (!key) continue;  // a bus stream
    next_seq_ = std::max(next_seq_, m.seq + 1);
    // Only the name record() writes: another spelling of the same window ("$SSE:03:…") would interleave.
    if (m.payload_format != store::StreamMessage::Payload::bytes || !m.msg_id || key->second != m.subject ||
        history_stream(key->first, key->second) != m.stream) {
      spdlog::warn("store: SSE history record {} #{} is not one: erased", log_text(m.stream), m.seq);
      ops.push_back(store::erase_stream_message(m.stream, m.seq));
      continue;
    }
    auto [it, fresh] = windows_.try_emplace(*key);
    Window& w = it->second;
    if (fresh) {
      w.lru = lru_.insert(lru_.end(), *key);
      written.emplace_back(m.time_ms, *key);
    }
    w.dropped = w.dropped || m.headers == kCutHeaders;
    w.frames.push_back({m.seq, *m.msg_id, m.payload.str(), m.time_ms});
    size_t n = frame_bytes(*m.msg_id, m.payload.str());
    w.bytes += n;
    total_bytes_ += n;
    written.back().first = std::max(written.back().first, m.time_ms);
    trim(*key, w, ops);
  }
  std::stable_sort(written.begin(), written.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  for (const auto& [ms, key] : written) lru_.splice(lru_.end(), lru_, windows_.at(key).lru);
  evict_past_limits(ops);
  return ops;
}

bool SseHistory::record(const std::string& realm, std::string_view event, std::string id, std::string frame,
                        Done done) {
  // A store slower than the publishers must not hold an unbounded queue of frames: past the limit the
  // caller refuses the message before routing it (a retry then cannot duplicate it).
  const size_t n = frame_bytes(id, frame);
  if (unwritten_.fetch_add(n) + n > limits_.max_unwritten_bytes) {
    unwritten_.fetch_sub(n);
    return false;
  }
  std::lock_guard lock(mu_);
  std::vector<store::Op> ops;
  Key key(realm, std::string(event));
  auto it = window(key);
  Window& w = it->second;
  const int64_t now = unix_ms();
  // One seq for every window: a window dropped and made again never reuses a seq its old records had.
  const uint64_t seq = next_seq_++;
  w.frames.push_back({seq, id, frame, now});
  w.bytes += n;
  total_bytes_ += n;
  trim(key, w, ops);
  ops.push_back(store::put(stored(history_stream(realm, event), event, seq, id, frame, now, w.dropped)));
  evict_past_limits(ops);
  writer_.submit(std::move(ops), [this, n, done = std::move(done), realm, event = key.second](const Status& s) {
    unwritten_.fetch_sub(n);
    if (!s) spdlog::warn("store: the SSE history of {}/{} was not written: {}", log_text(realm), log_text(event), s.error().message);
    if (done) done(s);
  });
  return true;
}

void SseHistory::purge_realm(const std::string& realm) {
  std::lock_guard lock(mu_);
  std::vector<store::Op> ops;
  for (auto it = windows_.lower_bound({realm, ""}); it != windows_.end() && it->first.first == realm;)
    evict(it++, ops);
  if (ops.empty()) return;
  writer_.submit(std::move(ops), [realm](const Status& s) {
    if (!s) spdlog::warn("store: the SSE history of removed realm {} was not deleted: {}", log_text(realm), s.error().message);
  });
}

// The window of `key`, made as needed, now the most recently written (evict_past_limits makes room).
SseHistory::Windows::iterator SseHistory::window(const Key& key) {
  auto it = windows_.find(key);
  if (it != windows_.end()) {
    lru_.splice(lru_.end(), lru_, it->second.lru);
    return it;
  }
  it = windows_.emplace(key, Window{}).first;
  it->second.lru = lru_.insert(lru_.end(), key);
  return it;
}

// The per-window caps: the oldest messages go (one is always kept, however large).
void SseHistory::trim(const Key& key, Window& w, std::vector<store::Op>& ops) {
  std::string stream;
  while (w.frames.size() > std::max<size_t>(limits_.max_messages, 1) ||
         (w.bytes > limits_.max_bytes && w.frames.size() > 1)) {
    const Frame& f = w.frames.front();
    if (stream.empty()) stream = history_stream(key.first, key.second);
    ops.push_back(store::erase_stream_message(stream, f.seq));
    size_t n = frame_bytes(f.id, f.frame);
    w.bytes -= n;
    total_bytes_ -= n;
    w.frames.pop_front();
    w.dropped = true;
  }
}

void SseHistory::evict(Windows::iterator it, std::vector<store::Op>& ops) {
  std::string stream = history_stream(it->first.first, it->first.second);
  for (const Frame& f : it->second.frames) ops.push_back(store::erase_stream_message(stream, f.seq));
  total_bytes_ -= it->second.bytes;
  lru_.erase(it->second.lru);
  windows_.erase(it);
}

// Past max_events or the total, whole windows go, least recently written first (never the last one).
void SseHistory::evict_past_limits(std::vector<store::Op>& ops) {
  while ((windows_.size() > limits_.max_events || total_bytes_ > limits_.max_total_bytes) && lru_.size() > 1)
    evict(windows_.find(lru_.front()), ops);
}

Replay SseHistory::after(const std::string& realm, const std::string& event, std::string_view since) const {
  std::lock_guard lock(mu_);
  Replay out;
  auto it = windows_.find({realm, event});
  if (it == windows_.end()) return out;
  const Window& w = it->second;
  size_t start = 0;
  bool found = false;
  for (size_t i = w.frames.size(); i-- > 0;) {
    if (w.frames[i].id == since) {
      start = i + 1;
      found = true;
      break;
    }
  }
  out.truncated = !found && w.dropped;
  for (size_t i = start; i < w.frames.size(); ++i) out.frames.emplace_back(w.frames[i].id, w.frames[i].frame);
  return out;
}

size_t SseHistory::events() const {
  std::lock_guard lock(mu_);
  return windows_.size();
}

void SseHistory::move_along(std::vector<store::Op> ops, const std::function<void(std::vector<store::Op>)>& commit) {
  std::lock_guard lock(mu_);
  for (const auto& [key, w] : windows_) {
    std::string stream = history_stream(key.first, key.second);
    for (const Frame& f : w.frames)
      ops.push_back(store::put(stored(stream, key.second, f.seq, f.id, f.frame, f.time_ms, w.dropped)));
  }
  commit(std::move(ops));
}

}  // namespace siomq::surfaces::http
