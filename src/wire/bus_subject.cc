#include "wire/bus_subject.h"

namespace siomq::bus {
namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' || c == '\v'; }

// Walks the tokens of `s` one at a time, without allocating.
class Tokens {
 public:
  explicit Tokens(std::string_view s) : s_(s) {}
  bool done() const { return pos_ > s_.size(); }
  std::string_view next() {
    size_t end = s_.find('.', pos_);
    if (end == std::string_view::npos) end = s_.size();
    std::string_view token = s_.substr(pos_, end - pos_);
    pos_ = end + 1;
    return token;
  }

 private:
  std::string_view s_;
  size_t pos_ = 0;
};

const char* check(std::string_view s, bool wildcards) {
  if (s.empty()) return "must not be empty";
  if (s.size() > kMaxSubjectBytes) return "is longer than 1024 bytes";
  for (char c : s) {
    if (is_space(c)) return "must not contain whitespace";
  }
  Tokens tokens(s);
  while (!tokens.done()) {
    std::string_view token = tokens.next();
    if (token.empty()) return "has an empty token";
    if (token == "*" || token == ">") {
      if (!wildcards) return "must not contain wildcards";
      if (token == ">" && !tokens.done()) return "may use '>' as its last token only";
    }
  }
  return nullptr;
}

}  // namespace

const char* subject_error(std::string_view subject) { return check(subject, false); }
const char* pattern_error(std::string_view pattern) { return check(pattern, true); }

bool subject_matches(std::string_view pattern, std::string_view subject) {
  Tokens p(pattern), s(subject);
  while (!p.done()) {
    std::string_view want = p.next();
    if (want == ">") return !s.done();
    if (s.done()) return false;
    std::string_view got = s.next();
    if (want != "*" && want != got) return false;
  }
  return s.done();
}

bool patterns_overlap(std::string_view a, std::string_view b) {
  Tokens x(a), y(b);
  while (!x.done() && !y.done()) {
    std::string_view u = x.next(), v = y.next();
    if (u == ">" || v == ">") return true;  // the other has a token here, and ">" takes it and the rest
    if (u != "*" && v != "*" && u != v) return false;
  }
  return x.done() && y.done();
}

bool pattern_covers(std::string_view outer, std::string_view inner) {
  Tokens o(outer), i(inner);
  while (!o.done()) {
    std::string_view want = o.next();
    if (want == ">") return !i.done();
    if (i.done()) return false;
    std::string_view got = i.next();
    if (got == ">") return false;  // inner reaches further than one token here
    if (want != "*" && (got == "*" || want != got)) return false;
  }
  return i.done();
}

}  // namespace siomq::bus
