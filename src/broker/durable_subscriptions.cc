// Durable subscriptions stored to survive restarts (§0 row 6), their removal with their queue, and a
// removed realm's purge of everything it stored.
#include "broker/queue_state.h"

namespace siomq::broker {

void DurableQueues::State::save_subscription(DurableSubscription sub) {
  std::string id = store::subscription_id(sub.realm, sub.key, sub.consumer);
  auto& stored = stored_specs[id];
  if (stored == sub.spec) return;  // a client re-subscribing on every reconnect writes nothing
  stored = sub.spec;
  store::SubscriptionRecord rec{std::move(sub.realm), std::move(sub.key), std::move(sub.consumer), std::move(sub.spec)};
  submit({store::put(rec)});
}

void DurableQueues::State::remove_subscription(const DurableSubscription& sub) {
  std::string id = store::subscription_id(sub.realm, sub.key, sub.consumer);
  if (stored_specs.erase(id)) submit({store::erase_subscription(id)});
}

void DurableQueues::State::drop_queue(const DurableSubscription& sub) {
  auto it = queues.find(queue_id(sub.realm, sub.key, sub.consumer_id));
  if (it == queues.end()) return;
  std::vector<store::Op> ops;
  std::vector<Entry*> all;
  for (auto& [seq, e] : it->second.entries) all.push_back(&e);
  for (Entry* e : all) {
    ops.push_back(store::erase_row(e->row.seq));
    remove(*e);
  }
  emptied.erase(it->second.id);
  queues.erase(it);
  submit(std::move(ops));
}

void DurableQueues::State::purge_realm(const std::string& realm, const std::function<void(const Status&)>& done) {
  std::vector<store::Op> ops;
  for (auto it = queues.begin(); it != queues.end();) {
    if (it->second.realm != realm) {
      ++it;
      continue;
    }
    std::vector<Entry*> all;
    for (auto& [seq, e] : it->second.entries) all.push_back(&e);
    for (Entry* e : all) {
      ops.push_back(store::erase_row(e->row.seq));
      remove(*e);
    }
    it = queues.erase(it);
  }
  for (auto it = dead.begin(); it != dead.end();) {
    if (it->second.row.realm != realm) {
      ++it;
      continue;
    }
    ops.push_back(store::erase_dead(it->first));
    dead_by_id.erase(it->second.row.id);
    it = dead.erase(it);
  }
  const std::string prefix = realm + '\0';
  for (auto it = stored_specs.begin(); it != stored_specs.end();) {
    if (!it->first.starts_with(prefix)) {
      ++it;
      continue;
    }
    ops.push_back(store::erase_subscription(it->first));
    it = stored_specs.erase(it);
  }
  submit(std::move(ops), done);
}

}  // namespace siomq::broker
