#include "surfaces/tyo_mq/stored_subscription.h"

#include <charconv>
#include <initializer_list>
#include <utility>

#include "broker/broker.h"
#include "wire/json_spans.h"
#include "wire/json_text.h"
#include "wire/socketio.h"

namespace siomq::surfaces {
namespace {

using broker::DeliveryPolicy;
using broker::SubscribeSpec;

using json_text::object;

std::optional<int64_t> integer(std::string_view text) {
  int64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return v;
}

}  // namespace

std::string encode_spec(const SubscribeSpec& spec) {
  const DeliveryPolicy& p = spec.policy;
  auto flag = [](bool b) { return std::string(b ? "true" : "false"); };
  return object({{"event", json_text::quoted(spec.event)},
                 {"producer", json_text::quoted(spec.producer)},
                 {"consumer", json_text::quoted(spec.consumer)},
                 {"id", json_text::quoted(spec.id)},
                 {"consumer_id", json_text::quoted(spec.consumer_id)},
                 {"topic", flag(spec.topic)},
                 {"group", spec.group ? json_text::quoted(*spec.group) : "null"},
                 {"durable", flag(spec.durable)},
                 {"ack", flag(p.ack)},
                 {"ack_timeout_ms", std::to_string(p.ack_timeout_ms)},
                 {"max_attempts", std::to_string(p.max_attempts)},
                 {"retry_delay_ms", std::to_string(p.retry_delay_ms)},
                 {"exponential", flag(p.exponential)}});
}

std::optional<SubscribeSpec> decode_spec(std::string_view json) {
  auto members = json_spans::object_members(json);
  if (!members) return std::nullopt;
  SubscribeSpec spec;
  int seen = 0;
  for (const auto& m : *members) {
    const std::string_view v = m.value;
    auto text = [&](std::string& out) {
      auto t = json_spans::unescape(v);
      if (!t) return false;
      out = std::move(*t);
      return true;
    };
    auto flag = [&](bool& out) {
      if (v != "true" && v != "false") return false;
      out = v == "true";
      return true;
    };
    auto number = [&](auto& out) {
      auto n = integer(v);
      if (!n || *n < 0) return false;
      out = static_cast<std::remove_reference_t<decltype(out)>>(*n);
      return true;
    };
    bool ok = true;
    if (m.key == "event") ok = text(spec.event);
    else if (m.key == "producer") ok = text(spec.producer);
    else if (m.key == "consumer") ok = text(spec.consumer);
    else if (m.key == "id") ok = text(spec.id);
    else if (m.key == "consumer_id") ok = text(spec.consumer_id);
    else if (m.key == "topic") ok = flag(spec.topic);
    else if (m.key == "group") {
      if (v != "null") ok = text(spec.group.emplace());
    } else if (m.key == "durable") ok = flag(spec.durable);
    else if (m.key == "ack") ok = flag(spec.policy.ack);
    else if (m.key == "ack_timeout_ms") ok = number(spec.policy.ack_timeout_ms);
    else if (m.key == "max_attempts") ok = number(spec.policy.max_attempts);
    else if (m.key == "retry_delay_ms") ok = number(spec.policy.retry_delay_ms);
    else if (m.key == "exponential") ok = flag(spec.policy.exponential);
    else continue;
    if (!ok) return std::nullopt;
    ++seen;
  }
  if (seen != 13 || spec.consumer.empty() || spec.policy.max_attempts < 1) return std::nullopt;
  return spec;
}

broker::DurableSubscription durable_subscription(const std::string& realm, const SubscribeSpec& spec) {
  return {realm, broker::subscription_key(spec.producer, spec.event), spec.consumer, spec.consumer_id, spec.policy,
          encode_spec(spec)};
}

std::optional<broker::DurableSubscription> read_subscription(const store::SubscriptionRecord& record) {
  auto spec = decode_spec(record.spec);
  if (!spec) return std::nullopt;
  return broker::DurableSubscription{record.realm, record.key, record.consumer, spec->consumer_id, spec->policy,
                                     record.spec};
}

void restore_subscriptions(broker::Broker& broker, const std::vector<broker::DurableSubscription>& subscriptions) {
  for (const auto& sub : subscriptions) {
    // read_subscription accepted the spec, so it decodes again.
    if (auto spec = decode_spec(sub.spec))
      broker.with_realm(sub.realm, [&](broker::RealmRegistry& r) { r.restore(*spec); });
  }
}

}  // namespace siomq::surfaces
