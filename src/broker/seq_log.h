// Values by sequence number, for a log whose seqs only grow: a stream's messages, and each subject's
// seqs within it (broker/stream.h). What a std::map<uint64_t, V> would do there, without a node
// allocation per value:
//   - append (a seq above every held one) in O(1);
//   - find, and the first seq after a given one, in O(log n) (binary search);
//   - erase anywhere in amortized O(1): an erased value leaves a tombstone (its value destroyed at once),
//     tombstones at either end are dropped at once, and once they outnumber the live values the log is
//     compacted — so memory stays within twice the live values, and a walk skips at most as many
//     tombstones as it meets live values, amortized.
// The first and the last slot are always live. Not thread-safe; the caller serializes.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <utility>

namespace siomq::broker {

template <class V>
class SeqLog {
 public:
  size_t size() const { return live_; }
  bool empty() const { return live_ == 0; }
  // Slots held, live values and tombstones (at most twice the live values, or 32 tombstones).
  size_t slots() const { return slots_.size(); }

  // Stores `value` under `seq`: appended when above every held seq (the usual case), else put in its
  // place (replacing a live one) — linear then, for a load that is out of order.
  V& put(uint64_t seq, V value) {
    if (slots_.empty() || seq > slots_.back().seq) {
      slots_.push_back(Slot{seq, true, std::move(value)});
      ++live_;
      return slots_.back().value;
    }
    auto it = lower(seq);
    if (it != slots_.end() && it->seq == seq) {
      if (!it->live) {
        it->live = true;
        ++live_;
        --dead_;
      }
      it->value = std::move(value);
      return it->value;
    }
    ++live_;
    return slots_.insert(it, Slot{seq, true, std::move(value)})->value;
  }

  const V* find(uint64_t seq) const {
    auto it = lower(seq);
    return it != slots_.end() && it->seq == seq && it->live ? &it->value : nullptr;
  }
  V* find(uint64_t seq) { return const_cast<V*>(std::as_const(*this).find(seq)); }

  bool erase(uint64_t seq) {
    auto it = lower(seq);
    if (it == slots_.end() || it->seq != seq || !it->live) return false;
    it->live = false;
    it->value = V{};
    --live_;
    ++dead_;
    while (!slots_.empty() && !slots_.front().live) {
      slots_.pop_front();
      --dead_;
    }
    while (!slots_.empty() && !slots_.back().live) {
      slots_.pop_back();
      --dead_;
    }
    if (dead_ > live_ && dead_ > 32) compact();
    return true;
  }

  // Live values with a seq above `after`: O(log n) while the log holds no tombstone (a log that only
  // loses its oldest values never does), else a walk from there.
  size_t count_after(uint64_t after) const {
    if (after == UINT64_MAX) return 0;
    auto from = lower(after + 1);
    if (dead_ == 0) return static_cast<size_t>(slots_.end() - from);
    size_t n = 0;
    for (; from != slots_.end(); ++from) n += from->live ? 1 : 0;
    return n;
  }

  // The oldest and the newest live seq and value; the log must not be empty.
  uint64_t first_seq() const { return slots_.front().seq; }
  const V& first() const { return slots_.front().value; }
  uint64_t last_seq() const { return slots_.back().seq; }
  const V& last() const { return slots_.back().value; }

  // f(seq, value) for each live value with a seq above `after`, in order, while f returns true.
  template <class F>
  void each_after(uint64_t after, F&& f) const {
    if (after == UINT64_MAX) return;
    for (auto it = lower(after + 1); it != slots_.end(); ++it) {
      if (it->live && !f(it->seq, it->value)) return;
    }
  }
  // The same for every live value.
  template <class F>
  void each(F&& f) const {
    for (const Slot& s : slots_) {
      if (s.live && !f(s.seq, s.value)) return;
    }
  }
  // The same, newest first.
  template <class F>
  void each_newest_first(F&& f) const {
    for (auto it = slots_.rbegin(); it != slots_.rend(); ++it) {
      if (it->live && !f(it->seq, it->value)) return;
    }
  }

 private:
  struct Slot {
    uint64_t seq;
    bool live;
    V value;
  };
  using Slots = std::deque<Slot>;

  // The first slot whose seq is at least `seq`. Without tombstones or gaps below it, slot i holds
  // first seq + i: found at once, the binary search only when that guess misses.
  typename Slots::const_iterator lower(uint64_t seq) const {
    if (!slots_.empty() && seq >= slots_.front().seq) {
      const uint64_t i = seq - slots_.front().seq;
      if (i < slots_.size() && slots_[i].seq == seq) return slots_.begin() + static_cast<std::ptrdiff_t>(i);
    }
    return std::lower_bound(slots_.begin(), slots_.end(), seq, [](const Slot& s, uint64_t v) { return s.seq < v; });
  }
  typename Slots::iterator lower(uint64_t seq) {
    auto it = std::as_const(*this).lower(seq);
    return slots_.begin() + (it - slots_.cbegin());
  }
  void compact() {
    std::erase_if(slots_, [](const Slot& s) { return !s.live; });
    dead_ = 0;
  }

  Slots slots_;
  size_t live_ = 0;
  size_t dead_ = 0;
};

}  // namespace siomq::broker
