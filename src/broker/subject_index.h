// The subject index: which subscription patterns match a subject. One trie over the subject's levels
// serves exact names, MQTT topics (`/`, `+`, `#`) and NATS subjects (`.`, `*`, `>`); matching costs
// the depth of the subject, not the number of patterns.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace siomq::broker {

// How a subject splits into levels, and what the wildcard levels are.
struct SubjectSyntax {
  char separator;
  std::string_view single;    // matches exactly one level
  std::string_view multi;     // matches the remaining levels, as the last level of a pattern only
  bool multi_matches_parent;  // MQTT: "a/#" matches "a" too; NATS: "a.>" needs at least one more level
};

// tyo-mq topic mode (protocol §4.4): "+" matches any one level (an empty one too), a final "#" the rest
// including the parent; a "#" elsewhere matches only by plain string equality; "a+" is literal.
inline constexpr SubjectSyntax kMqttSyntax{'/', "+", "#", true};
// NATS subjects: "*" one token, a final ">" one or more tokens.
inline constexpr SubjectSyntax kNatsSyntax{'.', "*", ">", false};

class SubjectIndex {
 public:
  using Id = uint64_t;

  explicit SubjectIndex(SubjectSyntax syntax);
  ~SubjectIndex();
  SubjectIndex(SubjectIndex&&) noexcept;
  SubjectIndex& operator=(SubjectIndex&&) noexcept;

  // Adds `id` under `pattern`; adding the same pair twice keeps one.
  void insert(std::string_view pattern, Id id);
  // Removes the pair; returns whether it was there.
  bool erase(std::string_view pattern, Id id);
  // Appends the id of every pattern matching `subject` (an id once per pattern it was inserted under).
  void match(std::string_view subject, std::vector<Id>& out) const;
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }

 private:
  struct Node;
  // Patterns with a multi-level wildcard before their last level: they match only their own text.
  bool literal_only(std::string_view pattern) const;

  SubjectSyntax syntax_;
  std::unique_ptr<Node> root_;
  std::unordered_map<std::string, std::vector<Id>> literal_;
  size_t size_ = 0;
};

}  // namespace siomq::broker
