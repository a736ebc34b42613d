// DurableQueues::view: the queues as the web console shows them (surfaces/console/console_view.h).
#include "broker/queue_state.h"

namespace siomq::broker {

void DurableQueues::view(std::optional<std::string> realm, std::optional<std::string> only, size_t limit,
                         std::function<void(QueueView)> done) {
  state_->post([s = state_.get(), realm = std::move(realm), only = std::move(only), limit, done = std::move(done)] {
    QueueView out;
    out.totals = s->totals();
    auto now = SteadyClock::now();
    if (now - s->viewed_at >= std::chrono::seconds(1)) {
      s->viewed_realms.clear();
      for (const auto& [id, q] : s->queues) {
        RealmQueueCounts& c = s->viewed_realms[q.realm];
        c.queued += q.entries.size();
        c.in_flight += q.flying;
      }
      for (const auto& [seq, d] : s->dead) ++s->viewed_realms[d.row.realm].dead;
      s->viewed_at = now;
    }
    if (!only) {
      out.realms = s->viewed_realms;
    } else if (auto it = s->viewed_realms.find(*only); it != s->viewed_realms.end()) {
      out.realms.insert(*it);
    }
    if (realm) {
      // Queue ids begin with the realm and a NUL: the realm's queues are one range of the map.
      std::string from = *realm;
      from.push_back('\0');
      for (auto it = s->queues.lower_bound(from); it != s->queues.end() && it->first.starts_with(from); ++it) {
        const State::Queue& q = it->second;
        if (out.queues.size() == limit) {
          out.truncated = true;
          break;
        }
        int64_t oldest = q.entries.empty() ? 0 : q.entries.begin()->second.row.created_ms;
        out.queues.push_back({q.key, q.consumer, q.consumer_id, q.entries.size(), q.flying, oldest});
      }
    }
    done(std::move(out));
  });
}

}  // namespace siomq::broker
