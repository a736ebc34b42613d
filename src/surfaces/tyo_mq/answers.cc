#include "surfaces/tyo_mq/answers.h"

#include "surfaces/gate.h"
#include "surfaces/tyo_mq/frames.h"
#include "surfaces/tyo_mq/requests.h"
#include "wire/clock.h"
#include "wire/socketio.h"

namespace siomq::surfaces {

void send_notices(const std::vector<broker::Notice>& notices) {
  for (const auto& n : notices) {
    if (n.to) n.to->notify(n.presence);
  }
}

void reply_error(Reply& reply, const Error& error) {
  if (error.code == kBareStringError) {
    std::string bare;
    sio::append_json_string(bare, error.message);
    reply.emit("ERROR", bare);  // the reference sends this one as a bare string
  } else {
    reply.emit("ERROR", error_object(error.code, error.message));
  }
  if (reply.has_ack()) reply.ack("[" + error_reply(400, error.message) + "]");
}

std::optional<std::string_view> request_object_or_error(const Request& request, Reply& reply, std::string& storage) {
  auto r = request_object(request.args, storage, request.outline);
  if (!r) {
    reply_error(reply, Error{r.error().code, std::string(request.event) + ": " + r.error().message});
    return std::nullopt;
  }
  return *r;
}

bool within_rate(const auth::Snapshot& snap, Session& session, Reply& reply, size_t cost) {
  const auth::LimitValues& l = snap.limits.for_realm(session.realm());
  if (l.messages_per_second <= 0 && l.bytes_per_second <= 0) return true;
  int64_t now = steady_ms();
  const char* reason = nullptr;
  int64_t wait = session.messages.take(1, l.messages_per_second,
                                       l.message_burst > 0 ? l.message_burst : 3 * l.messages_per_second, now);
  if (wait) reason = "messages_per_second";
  if (!wait) {
    wait = session.bytes.take(static_cast<double>(cost), l.bytes_per_second,
                              l.bytes_burst > 0 ? l.bytes_burst : 2 * l.bytes_per_second, now);
    if (wait) reason = "bytes_per_second";
  }
  if (!wait) return true;
  rate_limited(session, reply, reason, wait, steady_ms());
  if (reply.has_ack()) reply.ack("[" + error_reply(429, std::string("rate limited: ") + reason) + "]");
  return false;
}

}  // namespace siomq::surfaces
