// The JSON encoding of the consumer state family (consumer_state.h).
#include "store/consumer_state.h"

#include "store/record_json.h"
#include "wire/json_spans.h"

namespace siomq::store {
namespace {

using namespace record_json;

constexpr std::array<std::string_view, 6> kConsumerStateFields = {"stream",    "consumer", "delivered",
                                                     "ack_floor", "pending",  "config"};
static_assert(kConsumerStateFields.size() <= kMaxFields);

void append_pending(std::string& out, const std::vector<PendingDelivery>& pending) {
  out.push_back('[');
  for (size_t i = 0; i < pending.size(); ++i) {
    if (i) out.push_back(',');
    out.push_back('[');
    append_integer(out, pending[i].stream_seq);
    out.push_back(',');
    append_integer(out, pending[i].deliveries);
    out.push_back(',');
    append_time(out, pending[i].last_delivered_ms);
    out.push_back(']');
  }
  out.push_back(']');
}

// One [stream_seq, deliveries, last_delivered_ms] triple.
std::optional<PendingDelivery> parse_pending(std::string_view text) {
  auto numbers = json_spans::array_elements(text);
  if (!numbers || numbers->size() != 3) return std::nullopt;
  auto seq = parse_integer((*numbers)[0]);
  auto deliveries = parse_integer((*numbers)[1]);
  auto at = parse_integer((*numbers)[2]);
  if (!seq || !deliveries || !at) return std::nullopt;
  return PendingDelivery{*seq, *deliveries, static_cast<int64_t>(*at)};
}

std::vector<PendingDelivery> read_pending(Fields& f) {
  std::vector<PendingDelivery> out;
  auto text = f.raw("pending");
  if (!text) return out;
  auto items = json_spans::array_elements(*text);
  if (!items) {
    f.fail_field("pending", "must be an array of [stream_seq, deliveries, last_delivered_ms]");
    return out;
  }
  out.reserve(items->size());
  for (auto item : *items) {
    auto p = parse_pending(item);
    if (!p) {
      f.fail_field("pending", "must be an array of [stream_seq, deliveries, last_delivered_ms]");
      return {};
    }
    out.push_back(*p);
  }
  return out;
}

// The order consumer_state.h promises: ack floor ≤ delivered, pending ascending within (floor, delivered].
void check_order(Fields& f, const ConsumerState& s) {
  if (f.error()) return;
  if (s.ack_floor > s.delivered) return f.fail_field("ack_floor", "is above \"delivered\"");
  uint64_t last = s.ack_floor;
  for (const PendingDelivery& p : s.pending) {
    if (p.stream_seq <= last || p.stream_seq > s.delivered)
      return f.fail_field("pending", "must be in stream seq order, above the ack floor and at most \"delivered\"");
    if (p.deliveries == 0) return f.fail_field("pending", "holds a message delivered 0 times");
    last = p.stream_seq;
  }
}

}  // namespace

std::string encode_consumer_state(const ConsumerState& s) {
  std::string out;
  out.reserve(96 + s.stream.size() + s.consumer.size() + s.config.size() + 24 * s.pending.size());
  out.push_back('{');
  append_key(out, "stream");
  append_string(out, s.stream);
  out.push_back(',');
  append_key(out, "consumer");
  append_string(out, s.consumer);
  out.push_back(',');
  append_key(out, "delivered");
  append_integer(out, s.delivered);
  out.push_back(',');
  append_key(out, "ack_floor");
  append_integer(out, s.ack_floor);
  out.push_back(',');
  append_key(out, "pending");
  append_pending(out, s.pending);
  out.push_back(',');
  append_key(out, "config");
  out.append(s.config);
  out.push_back('}');
  return out;
}

Result<ConsumerState> decode_consumer_state(std::string_view text) {
  Fields f("consumer state", text, kConsumerStateFields);
  ConsumerState s;
  s.stream = f.string("stream");
  s.consumer = f.string("consumer");
  s.delivered = f.integer("delivered");
  s.ack_floor = f.integer("ack_floor");
  s.pending = read_pending(f);
  s.config = f.object("config");
  check_order(f, s);
  if (f.error()) return *f.error();
  return s;
}

std::string consumer_state_key(std::string_view stream, std::string_view consumer) {
  std::string key;
  key.reserve(stream.size() + 1 + consumer.size());
  key.append(stream);
  key.push_back('\0');
  key.append(consumer);
  return key;
}

Op put(const ConsumerState& state) {
  return Op{Family::consumer_state, Op::Kind::put, consumer_state_key(state.stream, state.consumer),
            encode_consumer_state(state)};
}

Op erase_consumer_state(std::string_view stream, std::string_view consumer) {
  return Op{Family::consumer_state, Op::Kind::erase, consumer_state_key(stream, consumer), {}};
}

}  // namespace siomq::store
