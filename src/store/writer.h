// The store writer: one thread that applies the engine's changes to the backend with group commit.
// Everything submitted while a write is in progress goes into the next one, so under load many
// changes share one sync; I/O threads never wait for the disk. A submitter learns the outcome from
// its callback, which runs on the writer thread after the change is written (and synced, unless the
// mode is `never`). Callbacks run in submission order.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string_view>
#include <thread>
#include <deque>
#include <vector>

#include "store/backend.h"

namespace siomq::store {

enum class SyncMode {
  always,  // each submission is written and synced on its own
  batch,   // submissions are grouped (waiting at most the window for more) and synced once per group
  never,   // written without a sync; the operating system flushes when it likes
};
// "always", "batch" or "never"; nullopt for anything else.
std::optional<SyncMode> parse_sync_mode(std::string_view text);

struct WriterStats {
  uint64_t writes = 0;  // backend writes (one sync each, unless `never`)
  uint64_t ops = 0;
  uint64_t failures = 0;
};

class Writer {
 public:
  using Done = std::function<void(const Status&)>;
  // Told how long each group's backend write (and sync) took, on the writer thread (the metrics).
  using WriteObserver = std::function<void(std::chrono::nanoseconds took, size_t ops)>;

  Writer(Backend& backend, SyncMode mode, std::chrono::microseconds window, WriteObserver on_write = {});
  ~Writer();  // drains what was submitted, then stops
  Writer(const Writer&) = delete;
  Writer& operator=(const Writer&) = delete;

  void submit(std::vector<Op> ops, Done done);
  // Moves to another backend: everything submitted before goes to the current one; then `contents`
  // (the engine's whole state, as ops) is written to `next` and synced, and from then on every write
  // goes there. If writing `contents` fails the current backend stays. `done` on the writer thread.
  // `next` must outlive the writer's use of it (until another switch, or stop()).
  void switch_to(Backend& next, std::vector<Op> contents, Done done);
  // The backend written to now (it changes on the writer thread, after a switch).
  Backend& backend() const;
  // Writes everything submitted so far, then stops the thread; later submissions fail.
  void stop();
  WriterStats stats() const;

 private:
  struct Pending {
    std::vector<Op> ops;
    Done done;
    Backend* switch_to = nullptr;  // a switch (written alone, to that backend)
  };
  void run();

  Backend* backend_;  // changed only by the writer thread, under mu_
  const SyncMode mode_;
  const std::chrono::microseconds window_;
  const WriteObserver on_write_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Pending> pending_;
  bool stopping_ = false;
  WriterStats stats_;
  std::thread thread_;
};

}  // namespace siomq::store
