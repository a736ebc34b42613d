// A tyo-mq durable subscription as the store keeps it (§0 row 6): its SubscribeSpec as a JSON object
// (the stored record's `spec`, which the engine stores without reading), and the way back at start-up.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "broker/durable_queues.h"
#include "broker/realm_registry.h"

namespace siomq::broker {
class Broker;
}

namespace siomq::surfaces {

// The stored form of a subscription's spec (a JSON object), and back; nullopt for anything that is
// not a whole, valid spec (the text may come from a damaged disk).
std::string encode_spec(const broker::SubscribeSpec& spec);
std::optional<broker::SubscribeSpec> decode_spec(std::string_view json);

// The durable subscription the engine keeps for `spec` in `realm`.
broker::DurableSubscription durable_subscription(const std::string& realm, const broker::SubscribeSpec& spec);
// broker::ReadSubscription for tyo-mq's records.
std::optional<broker::DurableSubscription> read_subscription(const store::SubscriptionRecord& record);
// Puts the subscriptions DurableQueues::load or ::adopt gave back into their realms (RealmRegistry::restore:
// one the consumer made here since stays; an online consumer's are routed to it at once).
void restore_subscriptions(broker::Broker& broker, const std::vector<broker::DurableSubscription>& subscriptions);

}  // namespace siomq::surfaces
