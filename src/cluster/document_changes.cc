#include "cluster/document_changes.h"

#include <boost/asio/post.hpp>

namespace siomq::cluster {

using redis::Value;

namespace {

Error no_redis() { return make_error("the cluster's store (redis) is unavailable; retry later", 503); }

}  // namespace

DocumentChanges::DocumentChanges(boost::asio::io_context& io, Command command, std::function<bool()> up,
                                 std::function<uint64_t()> generation)
    : io_(io), command_(std::move(command)), up_(std::move(up)), generation_(std::move(generation)) {}

void DocumentChanges::change(std::string key, Link::Change change, std::function<void(const Status&)> done) {
  if (pending_.size() >= kMaxQueued) return done(make_error("too many changes wait for redis; retry later", 503));
  pending_.push_back(Pending{std::move(key), std::move(change), std::move(done), 0});
  if (pending_.size() == 1) next();
}

void DocumentChanges::next() {
  if (pending_.empty()) return;
  if (!up_()) return finish(no_redis());
  const std::string key = pending_.front().key;
  const uint64_t gen = generation_();
  command_({"WATCH", key}, [](Result<Value>) {});
  command_({"GET", key}, [this, gen](Result<Value> r) {
    if (gen != generation_() || !r || (r->kind != Value::Kind::nil && r->kind != Value::Kind::string)) {
      if (gen == generation_()) command_({"UNWATCH"}, [](Result<Value>) {});  // else the next change may abort
      return finish(no_redis());
    }
    Pending& c = pending_.front();
    auto changed = c.change(r->kind == Value::Kind::nil ? std::nullopt : std::optional<std::string>(std::move(r->text)));
    if (!changed) {
      command_({"UNWATCH"}, [](Result<Value>) {});
      return finish(changed.error());
    }
    command_({"MULTI"}, [](Result<Value>) {});
    command_({"SET", c.key, std::move(*changed)}, [](Result<Value>) {});
    command_({"EXEC"}, [this, gen](Result<Value> done) {
      if (gen != generation_() || !done || done->kind == Value::Kind::error) return finish(no_redis());
      if (done->kind != Value::Kind::nil) return finish(Ok{});
      // Another node changed the document since our read: read it again, a bounded number of times.
      if (++pending_.front().attempts < kMaxAttempts) return next();
      finish(make_error("the cluster's document keeps changing; retry later", 503));
    });
  });
}

void DocumentChanges::fail_all(const Status& s) {
  std::deque<Pending> all;
  all.swap(pending_);
  for (auto& p : all) p.done(s);
}

void DocumentChanges::finish(const Status& s) {
  if (pending_.empty()) return;  // failed by fail_all() meanwhile
  auto done = std::move(pending_.front().done);
  pending_.pop_front();
  done(s);
  if (!pending_.empty()) boost::asio::post(io_, [this] { next(); });
}

}  // namespace siomq::cluster
