#include "broker/stream.h"

#include "wire/bus_subject.h"

namespace siomq::broker {
namespace {

bool matches(std::string_view filter, std::string_view subject) {
  return filter.empty() || siomq::bus::subject_matches(filter, subject);
}

}  // namespace

std::vector<uint64_t> Stream::reconfigure(StreamConfig config, int64_t now_ms) {
  config_ = std::move(config);
  return apply_limits(now_ms);
}

Status Stream::admit(std::string_view subject, size_t size, size_t bytes) const {
  if (config_.max_msg_size >= 0 && size > static_cast<size_t>(config_.max_msg_size))
    return Error{413, "message size exceeds maximum allowed"};
  if (config_.discard != Discard::new_messages) return Ok{};
  if (config_.max_msgs > 0 && state_.messages >= static_cast<uint64_t>(config_.max_msgs))
    return Error{503, "maximum messages exceeded"};
  if (config_.max_bytes > 0 && state_.bytes + bytes > static_cast<uint64_t>(config_.max_bytes))
    return Error{503, "maximum bytes exceeded"};
  if (config_.max_msgs_per_subject > 0) {
    auto it = by_subject_.find(std::string(subject));
    if (it != by_subject_.end() && it->second.size() >= static_cast<size_t>(config_.max_msgs_per_subject))
      return Error{503, "maximum messages per subject exceeded"};
  }
  return Ok{};
}

void Stream::forget_ids(int64_t now_ms) {
  while (!id_order_.empty() && (config_.dedup_window_ms <= 0 || id_order_.size() > kMaxDedupIds ||
                                id_order_.front().first + config_.dedup_window_ms <= now_ms)) {
    auto it = ids_.find(id_order_.front().second);
    if (it != ids_.end() && it->second.second == id_order_.front().first) ids_.erase(it);
    id_order_.pop_front();
  }
}

std::optional<uint64_t> Stream::duplicate(std::string_view msg_id, int64_t now_ms) {
  forget_ids(now_ms);
  auto it = ids_.find(std::string(msg_id));
  if (it == ids_.end()) return std::nullopt;
  return it->second.first;
}

void Stream::index(uint64_t seq, const Entry& e) {
  by_subject_[e.message->subject].put(seq, {});
  state_.bytes += e.bytes;
  ++state_.messages;
}

uint64_t Stream::append(BusMessagePtr message, std::string msg_id, int64_t now_ms, std::vector<uint64_t>& removed) {
  const size_t bytes = stream_bytes(*message);
  // Room first (discard old): the oldest go, of the subject when its own limit is reached.
  if (config_.max_msgs_per_subject > 0) {
    auto it = by_subject_.find(message->subject);
    while (it != by_subject_.end() && !it->second.empty() &&
           it->second.size() >= static_cast<size_t>(config_.max_msgs_per_subject)) {
      uint64_t oldest = it->second.first_seq();
      remove(oldest);
      removed.push_back(oldest);
      it = by_subject_.find(message->subject);
    }
  }
  trim(removed, 1, bytes);
  uint64_t seq = skip(now_ms, msg_id);
  const Entry& e = messages_.put(seq, Entry{std::move(message), std::move(msg_id), bytes});
  index(seq, e);
  refresh_bounds();
  return seq;
}

uint64_t Stream::skip(int64_t now_ms, std::string msg_id) {
  uint64_t seq = ++state_.last_seq;
  if (!msg_id.empty() && config_.dedup_window_ms > 0) {
    ids_[msg_id] = {seq, now_ms};
    id_order_.emplace_back(now_ms, std::move(msg_id));
    forget_ids(now_ms);
  }
  if (messages_.empty()) state_.first_seq = seq + 1;
  return seq;
}

void Stream::restore(uint64_t seq, BusMessagePtr message, std::string msg_id) {
  if (messages_.find(seq)) return;  // (a store holds one record per seq)
  if (!msg_id.empty() && config_.dedup_window_ms > 0) {
    ids_[msg_id] = {seq, message->timestamp_ms};
    id_order_.emplace_back(message->timestamp_ms, msg_id);
  }
  const size_t bytes = stream_bytes(*message);
  const Entry& e = messages_.put(seq, Entry{std::move(message), std::move(msg_id), bytes});
  index(seq, e);
  if (seq > state_.last_seq) state_.last_seq = seq;
  refresh_bounds();
}

void Stream::restore_last_seq(uint64_t seq) {
  if (seq <= state_.last_seq) return;
  state_.last_seq = seq;
  refresh_bounds();
}

void Stream::refresh_bounds() {
  if (messages_.empty()) {
    state_.first_seq = state_.last_seq + 1;
    state_.first_ts_ms = state_.last_ts_ms = 0;
    return;
  }
  state_.first_seq = messages_.first_seq();
  state_.first_ts_ms = messages_.first().message->timestamp_ms;
  state_.last_ts_ms = messages_.last().message->timestamp_ms;
}

const Stream::Entry* Stream::get(uint64_t seq) const { return messages_.find(seq); }

const Stream::Entry* Stream::last_by_subject(std::string_view subject) const {
  auto it = by_subject_.find(std::string(subject));
  if (it == by_subject_.end() || it->second.empty()) return nullptr;
  return get(it->second.last_seq());
}

uint64_t Stream::last_seq_of_subject(std::string_view subject) const {
  auto it = by_subject_.find(std::string(subject));
  return it == by_subject_.end() || it->second.empty() ? 0 : it->second.last_seq();
}

std::optional<uint64_t> Stream::next(uint64_t after, std::string_view filter) const {
  // An exact filter (no wildcard) reads its subject's own index.
  if (!filter.empty() && filter.find('*') == std::string_view::npos && filter.find('>') == std::string_view::npos) {
    auto it = by_subject_.find(std::string(filter));
    if (it == by_subject_.end()) return std::nullopt;
    std::optional<uint64_t> found;
    it->second.each_after(after, [&found](uint64_t seq, const Present&) {
      found = seq;
      return false;
    });
    return found;
  }
  std::optional<uint64_t> found;
  messages_.each_after(after, [&](uint64_t seq, const Entry& e) {
    if (!matches(filter, e.message->subject)) return true;
    found = seq;
    return false;
  });
  return found;
}

uint64_t Stream::seq_at_time(int64_t time_ms) const {
  uint64_t found = state_.last_seq + 1;
  messages_.each([&](uint64_t seq, const Entry& e) {
    if (e.message->timestamp_ms < time_ms) return true;
    found = seq;
    return false;
  });
  return found;
}

uint64_t Stream::last_matching(std::string_view filter) const {
  uint64_t found = 0;
  messages_.each_newest_first([&](uint64_t seq, const Entry& e) {
    if (!matches(filter, e.message->subject)) return true;
    found = seq;
    return false;
  });
  return found;
}

uint64_t Stream::count_after(uint64_t after, std::string_view filter) const {
  if (filter.empty()) return messages_.count_after(after);
  // An exact filter counts in its subject's own index.
  if (filter.find('*') == std::string_view::npos && filter.find('>') == std::string_view::npos) {
    auto it = by_subject_.find(std::string(filter));
    return it == by_subject_.end() ? 0 : it->second.count_after(after);
  }
  uint64_t n = 0;
  messages_.each_after(after, [&](uint64_t, const Entry& e) {
    if (matches(filter, e.message->subject)) ++n;
    return true;
  });
  return n;
}

bool Stream::remove(uint64_t seq) {
  const Entry* e = messages_.find(seq);
  if (!e) return false;
  auto s = by_subject_.find(e->message->subject);
  if (s != by_subject_.end()) {
    s->second.erase(seq);
    if (s->second.empty()) by_subject_.erase(s);
  }
  state_.bytes -= e->bytes;
  --state_.messages;
  messages_.erase(seq);
  refresh_bounds();
  return true;
}

std::vector<uint64_t> Stream::purge(std::string_view subject, uint64_t keep) {
  std::vector<uint64_t> victims;
  messages_.each([&](uint64_t seq, const Entry& e) {
    if (subject.empty() || siomq::bus::subject_matches(subject, e.message->subject)) victims.push_back(seq);
    return true;
  });
  // `keep` keeps the newest N of what would be purged.
  victims.resize(victims.size() > keep ? victims.size() - keep : 0);
  for (uint64_t seq : victims) remove(seq);
  return victims;
}

std::vector<uint64_t> Stream::expire(int64_t now_ms) {
  std::vector<uint64_t> gone;
  if (config_.max_age_ms <= 0) return gone;
  while (!messages_.empty() && messages_.first().message->timestamp_ms + config_.max_age_ms <= now_ms) {
    uint64_t seq = messages_.first_seq();
    remove(seq);
    gone.push_back(seq);
  }
  return gone;
}

std::optional<int64_t> Stream::next_expiry_ms() const {
  if (config_.max_age_ms <= 0 || messages_.empty()) return std::nullopt;
  return messages_.first().message->timestamp_ms + config_.max_age_ms;
}

void Stream::trim(std::vector<uint64_t>& removed, size_t extra_msgs, size_t extra_bytes) {
  auto over = [&] {
    if (messages_.empty()) return false;
    if (config_.max_msgs > 0 && state_.messages + extra_msgs > static_cast<uint64_t>(config_.max_msgs)) return true;
    return config_.max_bytes > 0 && state_.bytes + extra_bytes > static_cast<uint64_t>(config_.max_bytes);
  };
  while (over()) {
    uint64_t seq = messages_.first_seq();
    remove(seq);
    removed.push_back(seq);
  }
}

std::vector<uint64_t> Stream::apply_limits(int64_t now_ms) {
  std::vector<uint64_t> removed = expire(now_ms);
  if (config_.max_msgs_per_subject > 0) {
    std::vector<uint64_t> over;
    for (const auto& [subject, seqs] : by_subject_) {
      size_t excess = seqs.size() > static_cast<size_t>(config_.max_msgs_per_subject)
                          ? seqs.size() - static_cast<size_t>(config_.max_msgs_per_subject) : 0;
      seqs.each([&](uint64_t seq, const Present&) {
        if (excess == 0) return false;
        over.push_back(seq);
        --excess;
        return true;
      });
    }
    for (uint64_t seq : over) remove(seq);
    removed.insert(removed.end(), over.begin(), over.end());
  }
  trim(removed);
  return removed;
}

}  // namespace siomq::broker
