#include "broker/stream_config.h"

#include "wire/bus_subject.h"
#include "wire/json_fields.h"
#include "wire/socketio.h"

namespace siomq::broker {
namespace {

using json::Fields;

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' || c == '\v'; }

// A limit: absent, 0 or -1 are unlimited (-1); otherwise positive, at most 2^53 (so that sums of
// times, counts and bytes never overflow: a max_age_ms that large is a hundred thousand years).
int64_t limit(Fields& f, std::string_view name) {
  auto v = f.integer(name, -1, int64_t{1} << 53);
  return !v || *v == 0 ? -1 : *v;
}

class Writer {
 public:
  Writer() : out_("{") {}
  Writer& str(std::string_view key, std::string_view value) {
    this->key(key);
    sio::append_json_string(out_, value);
    return *this;
  }
  Writer& num(std::string_view key, int64_t value) {
    this->key(key);
    out_ += std::to_string(value);
    return *this;
  }
  Writer& raw(std::string_view key, std::string_view text) {
    this->key(key);
    out_ += text;
    return *this;
  }
  std::string done() && {
    out_.push_back('}');
    return std::move(out_);
  }

 private:
  void key(std::string_view k) {
    if (out_.size() > 1) out_.push_back(',');
    sio::append_json_string(out_, k);
    out_.push_back(':');
  }
  std::string out_;
};

}  // namespace

bool valid_stream_name(std::string_view name) {
  if (name.empty() || name.size() > 64) return false;
  for (char c : name) {
    bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

bool valid_consumer_name(std::string_view name) {
  if (name.empty() || name.size() > 64) return false;
  for (char c : name) {
    if (c == '.' || c == '*' || c == '>' || is_space(c) || static_cast<unsigned char>(c) < 0x20) return false;
  }
  return true;
}

Result<StreamConfig> parse_stream_config(std::string_view object) {
  Fields f(object, {"name", "subjects", "storage", "retention", "max_msgs", "max_bytes", "max_age_ms", "max_msg_size",
                    "max_msgs_per_subject", "discard", "dedup_window_ms", "dead_letter_stream"});
  StreamConfig c;
  auto name = f.string("name", true, 256);
  if (name && !valid_stream_name(*name)) f.fail("name", "must be 1-64 characters of A-Za-z0-9_-");
  auto subjects = f.strings("subjects", kMaxStreamSubjects);
  auto storage = f.choice("storage", {"file", "memory"});
  auto retention = f.choice("retention", {"limits", "interest", "workqueue"});
  c.max_msgs = limit(f, "max_msgs");
  c.max_bytes = limit(f, "max_bytes");
  c.max_age_ms = limit(f, "max_age_ms");
  c.max_msg_size = limit(f, "max_msg_size");
  c.max_msgs_per_subject = limit(f, "max_msgs_per_subject");
  auto discard = f.choice("discard", {"old", "new"});
  auto dedup = f.integer("dedup_window_ms", 0, 7 * 86400 * 1000LL);
  auto dead = f.string("dead_letter_stream", false, 256);
  if (f.error()) return *f.error();
  c.name = std::move(*name);
  if (subjects && !subjects->empty()) {
    for (const std::string& s : *subjects) {
      if (const char* why = siomq::bus::pattern_error(s)) return Error{400, std::string("subjects: an entry ") + why};
    }
    c.subjects = std::move(*subjects);
  } else {
    c.subjects = {c.name};
  }
  if (storage) c.storage = *storage == "memory" ? StreamStorage::memory : StreamStorage::file;
  if (retention) c.retention = *retention == "interest" ? Retention::interest
                               : *retention == "workqueue" ? Retention::workqueue : Retention::limits;
  if (discard) c.discard = *discard == "new" ? Discard::new_messages : Discard::old_messages;
  if (dedup) c.dedup_window_ms = *dedup;
  if (dead && !dead->empty()) {
    if (!valid_stream_name(*dead)) return Error{400, "dead_letter_stream: must be 1-64 characters of A-Za-z0-9_-"};
    if (*dead == c.name) return Error{400, "dead_letter_stream: must be another stream"};
    c.dead_letter_stream = std::move(*dead);
  }
  return c;
}

Result<ConsumerConfig> parse_consumer_config(std::string_view object) {
  Fields f(object, {"stream", "name", "deliver_policy", "opt_start_seq", "opt_start_time_ms", "ack_policy",
                    "ack_wait_ms", "max_deliver", "backoff_ms", "filter_subject", "max_ack_pending",
                    "deliver_subject", "deliver_group"});
  ConsumerConfig c;
  auto stream = f.string("stream", true, 256);
  if (stream && !valid_stream_name(*stream)) f.fail("stream", "must be 1-64 characters of A-Za-z0-9_-");
  auto name = f.string("name", true, 256);
  if (name && !valid_consumer_name(*name)) f.fail("name", "must be 1-64 characters without '.', '*', '>' or whitespace");
  auto policy = f.choice("deliver_policy", {"all", "last", "new", "by_start_seq", "by_start_time"});
  auto start_seq = f.integer("opt_start_seq", 1, int64_t{1} << 53);
  auto start_time = f.integer("opt_start_time_ms", 0, INT64_MAX / 2);
  auto ack = f.choice("ack_policy", {"explicit", "none", "all"});
  auto ack_wait = f.integer("ack_wait_ms", 1, 86400 * 1000LL);
  auto max_deliver = f.integer("max_deliver", -1, INT32_MAX);
  auto backoff = f.integers("backoff_ms", kMaxBackoffSteps, 1, 86400 * 1000LL);
  auto filter = f.string("filter_subject", false, siomq::bus::kMaxSubjectBytes);
  auto max_ack_pending = f.integer("max_ack_pending", -1, kMaxAckPendingLimit);
  auto deliver_subject = f.string("deliver_subject", false, siomq::bus::kMaxSubjectBytes);
  auto deliver_group = f.string("deliver_group", false, 256);
  if (f.error()) return *f.error();
  c.stream = std::move(*stream);
  c.name = std::move(*name);
  if (policy) {
    c.deliver_policy = *policy == "last" ? DeliverPolicy::last
                       : *policy == "new" ? DeliverPolicy::new_messages
                       : *policy == "by_start_seq" ? DeliverPolicy::by_start_seq
                       : *policy == "by_start_time" ? DeliverPolicy::by_start_time : DeliverPolicy::all;
  }
  if (c.deliver_policy == DeliverPolicy::by_start_seq) {
    if (!start_seq) return Error{400, "opt_start_seq: is required with deliver_policy by_start_seq"};
    c.opt_start_seq = static_cast<uint64_t>(*start_seq);
  } else if (start_seq) {
    return Error{400, "opt_start_seq: goes only with deliver_policy by_start_seq"};
  }
  if (c.deliver_policy == DeliverPolicy::by_start_time) {
    if (!start_time) return Error{400, "opt_start_time_ms: is required with deliver_policy by_start_time"};
    c.opt_start_time_ms = *start_time;
  } else if (start_time) {
    return Error{400, "opt_start_time_ms: goes only with deliver_policy by_start_time"};
  }
  if (ack) c.ack_policy = *ack == "none" ? AckPolicy::none : *ack == "all" ? AckPolicy::all : AckPolicy::explicit_ack;
  if (ack_wait) c.ack_wait_ms = *ack_wait;
  if (max_deliver && *max_deliver != 0) c.max_deliver = *max_deliver;
  if (backoff) c.backoff_ms = std::move(*backoff);
  if (filter && !filter->empty()) {
    if (const char* why = siomq::bus::pattern_error(*filter)) return Error{400, std::string("filter_subject: ") + why};
    c.filter_subject = std::move(*filter);
  }
  if (max_ack_pending) c.max_ack_pending = *max_ack_pending == 0 ? -1 : *max_ack_pending;
  if (deliver_subject && !deliver_subject->empty()) {
    if (const char* why = siomq::bus::subject_error(*deliver_subject))
      return Error{400, std::string("deliver_subject: ") + why};
    if (siomq::bus::is_system(*deliver_subject)) return Error{400, "deliver_subject: $SYS. subjects are the server's"};
    c.deliver_subject = std::move(*deliver_subject);
  }
  if (deliver_group && !deliver_group->empty()) {
    if (c.deliver_subject.empty()) return Error{400, "deliver_group: goes only with deliver_subject"};
    for (char ch : *deliver_group) {
      if (is_space(ch)) return Error{400, "deliver_group: must not contain whitespace"};
    }
    c.deliver_group = std::move(*deliver_group);
  }
  return c;
}

std::string to_json(const StreamConfig& c) {
  std::string subjects = "[";
  for (const auto& s : c.subjects) {
    if (subjects.size() > 1) subjects.push_back(',');
    sio::append_json_string(subjects, s);
  }
  subjects.push_back(']');
  Writer w;
  w.str("name", c.name).raw("subjects", subjects);
  w.str("storage", c.storage == StreamStorage::memory ? "memory" : "file");
  w.str("retention", c.retention == Retention::interest ? "interest"
                     : c.retention == Retention::workqueue ? "workqueue" : "limits");
  w.num("max_msgs", c.max_msgs).num("max_bytes", c.max_bytes).num("max_age_ms", c.max_age_ms);
  w.num("max_msg_size", c.max_msg_size).num("max_msgs_per_subject", c.max_msgs_per_subject);
  w.str("discard", c.discard == Discard::new_messages ? "new" : "old").num("dedup_window_ms", c.dedup_window_ms);
  if (!c.dead_letter_stream.empty()) w.str("dead_letter_stream", c.dead_letter_stream);
  return std::move(w).done();
}

std::string to_json(const ConsumerConfig& c) {
  static constexpr std::string_view kPolicies[] = {"all", "last", "new", "by_start_seq", "by_start_time"};
  static constexpr std::string_view kAcks[] = {"explicit", "none", "all"};
  Writer w;
  w.str("stream", c.stream).str("name", c.name);
  w.str("deliver_policy", kPolicies[static_cast<size_t>(c.deliver_policy)]);
  if (c.deliver_policy == DeliverPolicy::by_start_seq) w.num("opt_start_seq", static_cast<int64_t>(c.opt_start_seq));
  if (c.deliver_policy == DeliverPolicy::by_start_time) w.num("opt_start_time_ms", c.opt_start_time_ms);
  w.str("ack_policy", kAcks[static_cast<size_t>(c.ack_policy)]);
  w.num("ack_wait_ms", c.ack_wait_ms).num("max_deliver", c.max_deliver);
  if (!c.backoff_ms.empty()) {
    std::string b = "[";
    for (int64_t v : c.backoff_ms) b += (b.size() > 1 ? "," : "") + std::to_string(v);
    w.raw("backoff_ms", b + "]");
  }
  if (!c.filter_subject.empty()) w.str("filter_subject", c.filter_subject);
  w.num("max_ack_pending", c.max_ack_pending);
  if (!c.deliver_subject.empty()) w.str("deliver_subject", c.deliver_subject);
  if (!c.deliver_group.empty()) w.str("deliver_group", c.deliver_group);
  return std::move(w).done();
}

}  // namespace siomq::broker
