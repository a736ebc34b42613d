// DurableQueues::view: the queues as the web console shows them (surfaces/console/console_view.h),
// gathered from the shards.
#include <algorithm>
#include <tuple>

#include "broker/queue_state.h"

namespace siomq::broker {

namespace {

// One shard's part of the view: its totals, its realms' counts, its queues of `realm` (up to `limit`).
QueueView view_part(DurableQueues::State& s, const std::optional<std::string>& realm,
                    const std::optional<std::string>& only, size_t limit);

}  // namespace

void DurableQueues::view(std::optional<std::string> realm, std::optional<std::string> only, size_t limit,
                         std::function<void(QueueView)> done) {
  Shared* shared = shared_.get();
  gather<QueueView>(
      shards_,
      [realm, only, limit](State& s, std::function<void(QueueView)> reply) { reply(view_part(s, realm, only, limit)); },
      [shared, limit, done](std::vector<QueueView> parts) {
        QueueView out = std::move(parts[0]);
        for (size_t i = 1; i < parts.size(); ++i) {
          QueueView& p = parts[i];
          add_counts(out.totals, p.totals);
          for (const auto& [name, c] : p.realms) {
            RealmQueueCounts& sum = out.realms[name];
            sum.queued += c.queued;
            sum.in_flight += c.in_flight;
            sum.dead += c.dead;
          }
          out.queues.insert(out.queues.end(), std::make_move_iterator(p.queues.begin()),
                            std::make_move_iterator(p.queues.end()));
          out.truncated = out.truncated || p.truncated;
        }
        if (parts.size() > 1) {
          // As one shard lists them: by key, then consumer id (the order of queue ids within a realm).
          std::sort(out.queues.begin(), out.queues.end(), [](const QueueSummary& a, const QueueSummary& b) {
            return std::tie(a.key, a.consumer_id) < std::tie(b.key, b.consumer_id);
          });
          if (out.queues.size() > limit) {
            out.queues.resize(limit);
            out.truncated = true;
          }
        }
        out.totals.queued_bytes = shared->queued_bytes();
        done(std::move(out));
      });
}

namespace {

QueueView view_part(DurableQueues::State& s, const std::optional<std::string>& realm,
                    const std::optional<std::string>& only, size_t limit) {
  QueueView out;
  out.totals = s.totals();
  auto now = SteadyClock::now();
  if (now - s.viewed_at >= std::chrono::seconds(1)) {
    s.viewed_realms.clear();
    for (const auto& [id, q] : s.queues) {
      RealmQueueCounts& c = s.viewed_realms[q.realm];
      c.queued += q.entries.size();
      c.in_flight += q.flying;
    }
    for (const auto& [seq, d] : s.dead) ++s.viewed_realms[d.row.realm].dead;
    s.viewed_at = now;
  }
  if (!only) {
    out.realms = s.viewed_realms;
  } else if (auto it = s.viewed_realms.find(*only); it != s.viewed_realms.end()) {
    out.realms.insert(*it);
  }
  if (realm) {
    // Queue ids begin with the realm and a NUL: the realm's queues are one range of the map.
    std::string from = *realm;
    from.push_back('\0');
    for (auto it = s.queues.lower_bound(from); it != s.queues.end() && it->first.starts_with(from); ++it) {
      const DurableQueues::State::Queue& q = it->second;
      if (out.queues.size() == limit) {
        out.truncated = true;
        break;
      }
      int64_t oldest = q.entries.empty() ? 0 : q.entries.begin()->second.row.created_ms;
      out.queues.push_back({q.key, q.consumer, q.consumer_id, q.entries.size(), q.flying, oldest});
    }
  }
  return out;
}

}  // namespace

}  // namespace siomq::broker
