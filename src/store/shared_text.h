// SharedText: immutable text shared by every holder. A message stored for 100 consumer queues is kept
// once in memory, not 100 times (issue 12: one 1 MiB PRODUCE to 100 ACK subscriptions took 353 MB).
// Copying one copies a pointer; it reads as a const std::string&. Safe to copy and read from any thread
// (the text never changes); one object is not to be assigned from two threads at once.
#pragma once

#include <memory>
#include <string>

namespace siomq::store {

class SharedText {
 public:
  SharedText() : p_(empty_text()) {}
  SharedText(std::string s) : p_(std::make_shared<const std::string>(std::move(s))) {}
  SharedText(const char* s) : SharedText(std::string(s)) {}
  operator const std::string&() const { return *p_; }
  const std::string& str() const { return *p_; }
  size_t size() const { return p_->size(); }
  bool empty() const { return p_->empty(); }
  friend bool operator==(const SharedText& a, const SharedText& b) { return *a.p_ == *b.p_; }
  friend bool operator==(const SharedText& a, const std::string& b) { return *a.p_ == b; }
  friend bool operator==(const SharedText& a, const char* b) { return *a.p_ == b; }

 private:
  static const std::shared_ptr<const std::string>& empty_text() {
    static const auto empty = std::make_shared<const std::string>();
    return empty;
  }
  std::shared_ptr<const std::string> p_;
};

}  // namespace siomq::store
