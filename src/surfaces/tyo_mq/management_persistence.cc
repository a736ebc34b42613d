#include "surfaces/tyo_mq/management_persistence.h"

#include "broker/durable_queues.h"
#include "surfaces/tyo_mq/management_settings.h"
#include "surfaces/tyo_mq/public_settings.h"
#include "surfaces/tyo_mq/signed_request.h"

namespace siomq::surfaces::management {

using nlohmann::json;

void set_persistence(const Call& c) {
  auto reply = [&](const json& payload) { answer(c.reply, "AUTH_MANAGEMENT_RESULT", payload); };
  auto change = parse_persistence(c.body);
  if (!change) return reply(failure(change.error()));
  if (!c.ctx.options.move_store) return reply(failure(make_error("this server cannot change its store while running", 501)));
  if (c.ctx.moving_store.exchange(true)) return reply(failure(make_error("a store move is already in progress", 409)));
  c.ctx.options.move_store(change->target, [ctx = c.ctx.shared_from_this(), later = c.reply.keep(), change = *change](const Status& s) {
    ctx->moving_store = false;
    auto send = [&](const json& payload) { answer(*later, "AUTH_MANAGEMENT_RESULT", payload); };
    if (!s) return send(failure(s.error()));
    if (change.default_ttl) {
      std::optional<int64_t> ttl;
      if (change.default_ttl->kind == durations::Ttl::Kind::ms) ttl = change.default_ttl->ms;
      ctx->set_default_ttl(ttl);
      ctx->queues.set_default_ttl(ttl);
    }
    json after;
    auto saved = ctx->settings.update([&](json& doc) -> Status {
      doc["storage"] = change.storage;
      doc["storage_options"] = change.options;
      after = doc;
      return Ok{};
    });
    if (!saved) return send(failure(saved.error()));
    send({{"ok", true}, {"settings", public_settings(after)}});
  });
}

}  // namespace siomq::surfaces::management
