// One engine, visible (issue 15): in a realm listed in `bus.tyo_bridge_realms`, a tyo-mq PRODUCE of event
// E by producer P is also published on the bus subject tyo.<P>.<E>, and a bus `pub` to tyo.<P>.<E> reaches
// the tyo-mq consumers of P/E as CONSUME-… (a PRODUCE with from P, event E). Off by default.
//
// Tokens are escaped so that any name is one token: '%' → %25, '.' → %2E, '*' → %2A, '>' → %3E, and
// whitespace as %20 %09 %0A %0D %0C %0B; an empty name is the token "%". Bus data is the JSON text of
// PRODUCE's `message`; the other way, data that is JSON becomes `message` as is, other UTF-8 a JSON
// string, anything else is not bridged. A bridged message is never bridged back.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "broker/bus_message.h"
#include "surfaces/bus/bus_context.h"

namespace siomq::surfaces::bus {

inline constexpr std::string_view kTyoPrefix = "tyo.";

std::string escape_token(std::string_view name);
std::optional<std::string> unescape_token(std::string_view token);
// tyo.<P>.<E>, or nullopt when longer than a subject may be.
std::optional<std::string> tyo_subject(std::string_view producer, std::string_view event);
// (P, E) of a subject tyo.<P>.<E>; nullopt for anything else.
std::optional<std::pair<std::string, std::string>> parse_tyo_subject(std::string_view subject);

// Sets the tyo-mq surface's hook (Context::to_bus) when some realm bridges.
void install_tyo_bridge(const std::shared_ptr<BusContext>& ctx);
// A bus message published in `realm` on a tyo.<P>.<E> subject: a PRODUCE there, when the realm bridges.
void bridge_to_tyo(BusContext& ctx, const std::string& realm, const broker::BusMessage& message);

}  // namespace siomq::surfaces::bus
