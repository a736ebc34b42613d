#include "broker/subject_index.h"

#include <algorithm>

namespace siomq::broker {

struct SubjectIndex::Node {
  std::unordered_map<std::string, std::unique_ptr<Node>> children;
  std::unique_ptr<Node> single;  // the single-level wildcard child
  std::vector<Id> ids;           // patterns that end here
  std::vector<Id> multi_ids;     // patterns that end here with the multi-level wildcard

  bool empty() const { return children.empty() && !single && ids.empty() && multi_ids.empty(); }
};

namespace {

// Calls f(level) for each level of `s` split on `sep` (an empty string is one empty level).
template <class F>
void for_each_level(std::string_view s, char sep, F&& f) {
  size_t start = 0;
  while (true) {
    size_t end = s.find(sep, start);
    if (end == std::string_view::npos) {
      f(s.substr(start), true);
      return;
    }
    f(s.substr(start, end - start), false);
    start = end + 1;
  }
}

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> levels;
  for_each_level(s, sep, [&](std::string_view level, bool) { levels.push_back(level); });
  return levels;
}

bool add_unique(std::vector<SubjectIndex::Id>& v, SubjectIndex::Id id) {
  if (std::find(v.begin(), v.end(), id) != v.end()) return false;
  v.push_back(id);
  return true;
}

bool remove_one(std::vector<SubjectIndex::Id>& v, SubjectIndex::Id id) {
  auto it = std::find(v.begin(), v.end(), id);
  if (it == v.end()) return false;
  *it = v.back();
  v.pop_back();
  return true;
}

}  // namespace

SubjectIndex::SubjectIndex(SubjectSyntax syntax) : syntax_(syntax), root_(std::make_unique<Node>()) {}
SubjectIndex::~SubjectIndex() = default;
SubjectIndex::SubjectIndex(SubjectIndex&&) noexcept = default;
SubjectIndex& SubjectIndex::operator=(SubjectIndex&&) noexcept = default;

bool SubjectIndex::literal_only(std::string_view pattern) const {
  auto levels = split(pattern, syntax_.separator);
  for (size_t i = 0; i + 1 < levels.size(); ++i) {
    if (levels[i] == syntax_.multi) return true;
  }
  return false;
}

void SubjectIndex::insert(std::string_view pattern, Id id) {
  if (literal_only(pattern)) {
    if (add_unique(literal_[std::string(pattern)], id)) ++size_;
    return;
  }
  Node* node = root_.get();
  auto levels = split(pattern, syntax_.separator);
  for (size_t i = 0; i < levels.size(); ++i) {
    std::string_view level = levels[i];
    if (i + 1 == levels.size() && level == syntax_.multi) {
      if (add_unique(node->multi_ids, id)) ++size_;
      return;
    }
    std::unique_ptr<Node>& next = level == syntax_.single ? node->single : node->children[std::string(level)];
    if (!next) next = std::make_unique<Node>();
    node = next.get();
  }
  if (add_unique(node->ids, id)) ++size_;
}

bool SubjectIndex::erase(std::string_view pattern, Id id) {
  if (literal_only(pattern)) {
    auto it = literal_.find(std::string(pattern));
    if (it == literal_.end() || !remove_one(it->second, id)) return false;
    if (it->second.empty()) literal_.erase(it);
    --size_;
    return true;
  }
  auto levels = split(pattern, syntax_.separator);
  // The path from the root, to prune the nodes that the removal leaves empty.
  std::vector<std::pair<Node*, std::string_view>> path;
  Node* node = root_.get();
  bool removed = false;
  for (size_t i = 0; i <= levels.size(); ++i) {
    if (i == levels.size()) {
      removed = remove_one(node->ids, id);
      break;
    }
    std::string_view level = levels[i];
    if (i + 1 == levels.size() && level == syntax_.multi) {
      removed = remove_one(node->multi_ids, id);
      break;
    }
    Node* next = nullptr;
    if (level == syntax_.single) {
      next = node->single.get();
    } else {
      auto it = node->children.find(std::string(level));
      if (it != node->children.end()) next = it->second.get();
    }
    if (!next) return false;
    path.emplace_back(node, level);
    node = next;
  }
  if (!removed) return false;
  --size_;
  while (!path.empty() && node->empty()) {
    auto [parent, level] = path.back();
    path.pop_back();
    if (level == syntax_.single) parent->single.reset();
    else parent->children.erase(std::string(level));
    node = parent;
  }
  return true;
}

void SubjectIndex::match(std::string_view subject, std::vector<Id>& out) const {
  if (size_ == 0) return;  // (a realm whose streams have no core subscriber: every stored publish asks)
  if (!literal_.empty()) {
    auto it = literal_.find(std::string(subject));
    if (it != literal_.end()) out.insert(out.end(), it->second.begin(), it->second.end());
  }
  // The walk's buffers are the thread's, reused: a match is on every publish's path, and allocating
  // three of them each time cost more than the walk.
  thread_local std::vector<std::string_view> levels;
  thread_local std::vector<std::pair<const Node*, size_t>> stack;
  thread_local std::string key;
  levels.clear();
  for_each_level(subject, syntax_.separator, [](std::string_view level, bool) { levels.push_back(level); });
  // Depth-first over the (at most two) ways each level can match: its literal child and the wildcard.
  stack.clear();
  stack.emplace_back(root_.get(), 0);
  while (!stack.empty()) {
    auto [node, i] = stack.back();
    stack.pop_back();
    if (i == levels.size()) {
      out.insert(out.end(), node->ids.begin(), node->ids.end());
      if (syntax_.multi_matches_parent) out.insert(out.end(), node->multi_ids.begin(), node->multi_ids.end());
      continue;
    }
    out.insert(out.end(), node->multi_ids.begin(), node->multi_ids.end());
    if (node->single) stack.emplace_back(node->single.get(), i + 1);
    if (!node->children.empty()) {
      key.assign(levels[i]);
      auto it = node->children.find(key);
      if (it != node->children.end()) stack.emplace_back(it->second.get(), i + 1);
    }
  }
}

}  // namespace siomq::broker
