// The store's backends as the unit tests use them: a temporary data directory for the file backend, a
// key prefix of its own in the tests' redis (SIOMQ_TEST_REDIS_URL, started by scripts/test.sh) for the
// redis backend, and the cleanup that leaves that redis as it was.
#pragma once

#include <stdlib.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include "store/backend.h"

namespace siomq::store {

// A fresh directory under the system's temporary directory, removed with the object.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "siomq-store-test-XXXXXX").string();
    if (!::mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

inline const char* redis_url() { return std::getenv("SIOMQ_TEST_REDIS_URL"); }

// A key prefix no other test (or test process) uses.
inline std::string unique_prefix() {
  static std::atomic<int> n{0};
  return "siomq-test:" + std::to_string(::getpid()) + ":" + std::to_string(n++) + ":" +
         std::to_string(std::chrono::steady_clock::now().time_since_epoch().count());
}

enum class Kind { file, redis };

// Erases every record `backend` holds (in redis, emptying the hashes deletes them). The quarantine is
// left: a test that fills it removes it itself.
inline Status erase_everything(Backend& backend) {
  std::vector<Op> ops;
  auto c = backend.load();
  for (const auto& r : c.rows) ops.push_back(erase_row(r.seq));
  for (const auto& d : c.dead) ops.push_back(erase_dead(d.row.seq));
  for (const auto& s : c.subscriptions) ops.push_back(erase_subscription(subscription_id(s.realm, s.key, s.consumer)));
  for (const auto& m : c.stream_messages) ops.push_back(erase_stream_message(m.stream, m.seq));
  for (const auto& s : c.consumers) ops.push_back(erase_consumer_state(s.stream, s.consumer));
  for (const auto& e : c.directory) ops.push_back(erase_directory_entry(e.directory, e.realm, e.key));
  return backend.write(ops, true);
}

}  // namespace siomq::store
