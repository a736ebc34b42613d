// A bus stream's log in memory (bus.md §5, §6): its messages by sequence, its limits (max_msgs,
// max_bytes, max_age_ms, max_msgs_per_subject, max_msg_size, discard old/new), duplicate detection by
// message id within the window, and the indexes `stream.get` and the consumers read by (subject, time).
// The durable copy is the store's stream log family; the stream is rebuilt from it at start-up.
//
// Sequence numbers grow by one per stored message and are never reused (§8.6: a full purge moves
// first_seq to last_seq + 1). Not thread-safe: owned by broker::Streams, used on its thread only.
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "broker/bus_message.h"
#include "broker/seq_log.h"
#include "broker/stream_config.h"
#include "wire/result.h"

namespace siomq::broker {

// What a stored message costs against the byte limits besides its subject, header and data: what keeping
// it takes in memory (the BusMessage and its strings, its slot in the log, its entry in the subject index, and
// the subject again as that index's key), measured roughly, so that the byte caps bound real memory.
inline constexpr size_t kStreamMessageOverhead = 384;
// Message ids a stream remembers for duplicate detection, at most; past it the oldest are forgotten
// early (the window shrinks) rather than the memory growing.
inline constexpr size_t kMaxDedupIds = 100000;

struct StreamState {
  uint64_t messages = 0, bytes = 0, first_seq = 0, last_seq = 0;
  int64_t first_ts_ms = 0, last_ts_ms = 0;
};

class Stream {
 public:
  struct Entry {
    BusMessagePtr message;  // subject, header, data, timestamp_ms
    std::string msg_id;     // empty: none
    size_t bytes = 0;       // as the limits count it
  };

  Stream(StreamConfig config, int64_t created_ms) : config_(std::move(config)), created_ms_(created_ms) {
    state_.first_seq = 1;
  }

  const StreamConfig& config() const { return config_; }
  int64_t created_ms() const { return created_ms_; }
  // New limits (stream.update): applied at once; returns the seqs trimmed.
  std::vector<uint64_t> reconfigure(StreamConfig config, int64_t now_ms);

  // What storing a message of `size` (data and header) and `bytes` (as the limits count it) on `subject`
  // would break: max_msg_size (413), or a limit under discard new (503, §8.7).
  Status admit(std::string_view subject, size_t size, size_t bytes) const;
  // The seq a message id was stored under within the dedup window (§6, §8.9).
  std::optional<uint64_t> duplicate(std::string_view msg_id, int64_t now_ms);
  // Stores a message (admit() passed) as last_seq + 1; returns the seqs the limits removed (discard old).
  uint64_t append(BusMessagePtr message, std::string msg_id, int64_t now_ms, std::vector<uint64_t>& removed);
  // Gives out a seq without keeping a message (an interest stream with no consumer, §8.16).
  uint64_t skip(int64_t now_ms, std::string msg_id = {});
  // Rebuilds from the store (in seq order); a message past the limits is trimmed later by apply_limits().
  void restore(uint64_t seq, BusMessagePtr message, std::string msg_id);
  // Advances last_seq (a store whose newest messages were removed: seqs are never reused).
  void restore_last_seq(uint64_t seq);

  const Entry* get(uint64_t seq) const;
  const Entry* last_by_subject(std::string_view subject) const;
  // The first stored message after `after` whose subject matches `filter` (empty: any); nullopt: none.
  std::optional<uint64_t> next(uint64_t after, std::string_view filter) const;
  // The first seq stored at or after `time_ms`, else last_seq + 1.
  uint64_t seq_at_time(int64_t time_ms) const;
  // The newest seq whose subject matches `filter` (0: none).
  uint64_t last_matching(std::string_view filter) const;
  // Messages after `after` matching `filter` (num_pending). O(log n) for no filter or an exact one while
  // the log has no holes (only its oldest messages removed); else linear in the messages after `after`.
  uint64_t count_after(uint64_t after, std::string_view filter) const;
  uint64_t last_seq_of_subject(std::string_view subject) const;

  bool remove(uint64_t seq);
  // Forgets a message id (its message was taken back).
  void forget_id(const std::string& msg_id) { ids_.erase(msg_id); }
  // §8.6: everything, or what matches `subject`, keeping the newest `keep` (of that subject when given).
  std::vector<uint64_t> purge(std::string_view subject, uint64_t keep);
  // Messages older than max_age_ms; the time the next one expires.
  std::vector<uint64_t> expire(int64_t now_ms);
  std::optional<int64_t> next_expiry_ms() const;
  std::vector<uint64_t> apply_limits(int64_t now_ms);

  const StreamState& state() const { return state_; }
  // f(seq, entry) for every stored message, oldest first.
  template <class F>
  void each_message(F&& f) const {
    messages_.each([&f](uint64_t seq, const Entry& e) {
      f(seq, e);
      return true;
    });
  }

 private:
  void index(uint64_t seq, const Entry& e);
  void forget_ids(int64_t now_ms);
  void refresh_bounds();
  // Removes the oldest until the limits hold (with `extra` bytes and one more message to come).
  void trim(std::vector<uint64_t>& removed, size_t extra_msgs = 0, size_t extra_bytes = 0);

  StreamConfig config_;
  int64_t created_ms_;
  struct Present {};
  SeqLog<Entry> messages_;
  std::unordered_map<std::string, SeqLog<Present>> by_subject_;  // each subject's seqs
  // Message ids within the dedup window: id -> (seq, time stored), and their order of arrival.
  std::unordered_map<std::string, std::pair<uint64_t, int64_t>> ids_;
  std::deque<std::pair<int64_t, std::string>> id_order_;
  StreamState state_;
};

// A message's bytes as the limits count them.
inline size_t stream_bytes(const BusMessage& m) {
  return 2 * m.subject.size() + m.header.size() + m.data.size() + kStreamMessageOverhead;
}

}  // namespace siomq::broker
