// Where replies go across nodes (docs/scale-out.md "The bus across nodes"): a request relayed from node N
// names its inbox (`_INBOX.…`) as its reply subject; the receiving node notes (realm, inbox) → N here, so
// that a responder's `pub` to that inbox is sent to N alone. Inboxes are never shared as interest: a
// request costs the cluster no interest change.
//
// Bounded: at most kMaxEntries, each kept kKeepMs (longer than a request waits), oldest first out.
// Any thread (one mutex, nothing done under it but the map).
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>

namespace siomq::cluster {

class ReplyRoutes {
 public:
  static constexpr size_t kMaxEntries = 100'000;
  static constexpr int64_t kKeepMs = 65'000;  // a request waits 60 s at most (bus.md §8.4)

  void note(std::string_view realm, std::string_view subject, std::string_view node, int64_t now_ms);
  std::optional<std::string> node(std::string_view realm, std::string_view subject, int64_t now_ms);
  size_t size();

 private:
  static std::string key(std::string_view realm, std::string_view subject);
  void expire(int64_t now_ms);  // under mu_

  struct Entry {
    std::string node;
    int64_t until = 0;
  };
  std::mutex mu_;
  std::unordered_map<std::string, Entry> routes_;
  std::deque<std::pair<std::string, int64_t>> order_;  // (key, until) as noted; a key noted again is found twice
};

}  // namespace siomq::cluster
