// How long a message spends in the server: from the read that brought it in to the write that hands
// what it caused (a delivery to each recipient, an answer) to the kernel. This is the server's part of
// a client's end-to-end latency, with the client's and the network's left out, so a latency bar can be
// judged on what the server does (metrics: siomq_read_to_write_seconds; bench/compare.sh reports it).
//
// How: a WebSocket read stamps its thread (ReadStamp, a thread-local); every OutFrame made while the
// stamp is set carries it (out_frame.h), across threads too (a delivery to another worker's session),
// and the WebSocket write that completes a frame's bytes records now − stamp. Frames made with no read
// behind them (the durable queues' and the cluster's threads, timers, heartbeats, an HTTP publish, the
// bytes that came with the WebSocket upgrade) carry no stamp and are not counted; neither are
// long-polling responses.
//
// The span starts when the server read the bytes (a message that waited in the kernel's socket buffer
// while the worker was busy is not charged for that wait) and ends when the write returned.
//
// Threading: record_write() on the writing thread, into that thread's own buckets (relaxed stores, no lock
// and no shared cache line on the hot path); write_latency() from any thread sums every thread's.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

namespace siomq::net {

// Microseconds of the steady clock, modulo 2^32 (differences are right for spans under 71 minutes).
// Never 0: 0 means "no stamp".
uint32_t stamp_now_us();

// The stamp of the read whose message this thread is handling, or 0.
inline thread_local uint32_t t_read_stamp_us = 0;
inline uint32_t read_stamp() { return t_read_stamp_us; }

// Sets this thread's read stamp for its lifetime (a read and the handling of what it brought), and puts
// back the one it found.
class ReadStamp {
 public:
  ReadStamp() : previous_(t_read_stamp_us) { t_read_stamp_us = stamp_now_us(); }
  ~ReadStamp() { t_read_stamp_us = previous_; }
  ReadStamp(const ReadStamp&) = delete;
  ReadStamp& operator=(const ReadStamp&) = delete;

 private:
  uint32_t previous_;
};

// The histogram's bucket upper bounds, in microseconds (a last bucket, +Inf, follows).
inline constexpr std::array<uint32_t, 24> kWriteLatencyBoundsUs{
    5, 10, 20, 30, 40, 60, 100, 150, 200, 300, 500, 750, 1000, 1500, 2000, 3000, 5000, 10000, 20000, 50000,
    100000, 250000, 500000, 1000000};

// Frames written now that were stamped at `stamp` (0: not counted).
void record_write(uint32_t stamp, uint32_t now_us);

struct WriteLatency {
  std::array<uint64_t, kWriteLatencyBoundsUs.size() + 1> buckets{};  // per bucket, not cumulative
  uint64_t count = 0;
  uint64_t sum_us = 0;
};
// Every thread's counts since the process started (threads that ended included).
WriteLatency write_latency();

}  // namespace siomq::net
