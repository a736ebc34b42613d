// AUTH_MANAGEMENT_COMMAND (§8.2): admin-signed (or, for four realm commands, realm-manager-signed)
// changes to the settings, realm disposal, stats and the DLQ. The command table and the order of
// checks (proof, then command) are in management.cc; each command's handler in management_*.cc.
#pragma once

#include <memory>

#include "surfaces/tyo_mq/context.h"

namespace siomq::net {
struct Namespace;
}

namespace siomq::surfaces {

// Adds the handler to `ns`; it holds `ctx`.
void register_management_handlers(const std::shared_ptr<Context>& ctx, net::Namespace& ns);

}  // namespace siomq::surfaces
