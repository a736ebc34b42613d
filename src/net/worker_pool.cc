#include "net/worker_pool.h"

#include <spdlog/spdlog.h>

#include <exception>
#include <pthread.h>

namespace siomq::net {
namespace {
thread_local Worker* t_current = nullptr;
}

bool Worker::is_current() const { return t_current == this; }

Worker* WorkerPool::current() { return t_current; }

WorkerPool::WorkerPool(size_t threads) {
  if (threads == 0) threads = 1;
  for (size_t i = 0; i < threads; ++i) workers_.push_back(std::make_unique<Worker>(i));
}

WorkerPool::~WorkerPool() { stop(); }

void WorkerPool::start() {
  for (auto& w : workers_) guards_.emplace_back(w->io().get_executor());
  for (auto& w : workers_) {
    Worker* worker = w.get();
    threads_.emplace_back([worker] {
      // Named for top -H, perf and gdb: "siomq-io-0", ...
      pthread_setname_np(pthread_self(), ("siomq-io-" + std::to_string(worker->index())).c_str());
      t_current = worker;
      for (;;) {
        try {
          worker->io().run();
          break;
        } catch (const std::exception& e) {
          // A handler threw: log it and keep the worker serving its other connections.
          spdlog::error("worker {}: unhandled exception: {}", worker->index(), e.what());
        }
      }
      t_current = nullptr;
    });
  }
}

void WorkerPool::stop() {
  guards_.clear();
  for (auto& w : workers_) w->io().stop();
  for (auto& t : threads_) {
    if (t.joinable()) t.join();
  }
  threads_.clear();
}

}  // namespace siomq::net
