// Worker threads, one io_context each. A connection lives on one worker for its whole life, so
// everything about a session is touched by one thread only; other threads reach it by posting.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <atomic>
#include <memory>
#include <thread>
#include <vector>

namespace siomq::net {

class Worker {
 public:
  explicit Worker(size_t index) : index_(index) {}
  boost::asio::io_context& io() { return io_; }
  size_t index() const { return index_; }
  // True on this worker's own thread.
  bool is_current() const;

 private:
  friend class WorkerPool;
  boost::asio::io_context io_{1};
  size_t index_;
};

class WorkerPool {
 public:
  explicit WorkerPool(size_t threads);
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  size_t size() const { return workers_.size(); }
  Worker& at(size_t i) { return *workers_[i]; }
  // Round-robin choice for a new connection.
  Worker& next() { return *workers_[next_.fetch_add(1, std::memory_order_relaxed) % workers_.size()]; }
  // The worker whose thread is calling, or null on any other thread.
  static Worker* current();

  // Starts the threads; returns at once.
  void start();
  // Stops every io_context and joins the threads.
  void stop();

 private:
  std::vector<std::unique_ptr<Worker>> workers_;
  std::vector<std::thread> threads_;
  std::atomic<size_t> next_{0};
  using Guard = boost::asio::executor_work_guard<boost::asio::io_context::executor_type>;
  std::vector<Guard> guards_;
};

}  // namespace siomq::net
