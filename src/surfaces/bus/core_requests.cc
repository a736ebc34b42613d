#include "surfaces/bus/core_requests.h"

#include "surfaces/bus/fields.h"
#include "wire/bus_subject.h"

namespace siomq::surfaces::bus {
namespace {

// The subject, data and header every publishing request has.
struct Published {
  std::string subject, data, header;
};
Result<Published> read_published(Fields& f, std::span<const std::string> attachments) {
  Published p;
  auto subject = f.string("subject", true);
  if (f.error()) return *f.error();
  if (auto s = check_subject("subject", *subject); !s) return s.error();
  p.subject = std::move(*subject);
  auto data = read_data(f.raw("data").value_or(""), attachments);
  if (!data) return data.error();
  p.data = std::move(*data);
  if (auto h = f.raw("header")) {
    auto header = read_header(*h);
    if (!header) return header.error();
    p.header = std::move(*header);
  }
  return p;
}

}  // namespace

Status check_subject(std::string_view name, std::string_view subject) {
  if (const char* why = siomq::bus::subject_error(subject)) return bad(name, why);
  return Ok{};
}

Result<PubRequest> parse_pub(std::string_view args, std::span<const std::string> attachments) {
  auto object = request_object(args);
  if (!object) return object.error();
  Fields f(*object, {"subject", "data", "header", "reply"});
  auto p = read_published(f, attachments);
  if (!p) return p.error();
  auto reply = f.string("reply");
  if (f.error()) return *f.error();
  PubRequest r{std::move(p->subject), std::move(p->data), std::move(p->header), {}};
  if (reply) {
    if (auto s = check_subject("reply", *reply); !s) return s.error();
    r.reply = std::move(*reply);
  }
  return r;
}

Result<SubRequest> parse_sub(std::string_view args) {
  auto object = request_object(args);
  if (!object) return object.error();
  Fields f(*object, {"subject", "queue"});
  auto subject = f.string("subject", true);
  auto queue = f.string("queue", false, kMaxQueueBytes);
  if (f.error()) return *f.error();
  if (const char* why = siomq::bus::pattern_error(*subject)) return bad("subject", why);
  SubRequest r{std::move(*subject), {}};
  if (queue) {
    // A queue name is one token: no whitespace, no '.', not empty (an empty one would mean "no group").
    if (queue->empty()) return bad("queue", "must not be empty");
    for (char c : *queue) {
      if (c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' || c == '\v')
        return bad("queue", "must not contain whitespace");
    }
    r.queue = std::move(*queue);
  }
  return r;
}

Result<UnsubRequest> parse_unsub(std::string_view args) {
  auto object = request_object(args);
  if (!object) return object.error();
  Fields f(*object, {"sid", "max"});
  auto sid = f.string("sid", true, 64);
  auto max = f.integer("max", 0, INT64_MAX);
  if (f.error()) return *f.error();
  UnsubRequest r{std::move(*sid), std::nullopt};
  if (max) r.max = static_cast<uint64_t>(*max);
  return r;
}

Result<RequestRequest> parse_request(std::string_view args, std::span<const std::string> attachments) {
  auto object = request_object(args);
  if (!object) return object.error();
  Fields f(*object, {"subject", "data", "header", "timeout_ms"});
  auto p = read_published(f, attachments);
  if (!p) return p.error();
  auto timeout = f.integer("timeout_ms", 1, kMaxRequestTimeoutMs);
  if (f.error()) return *f.error();
  return RequestRequest{std::move(p->subject), std::move(p->data), std::move(p->header),
                        timeout.value_or(kDefaultRequestTimeoutMs)};
}

}  // namespace siomq::surfaces::bus
