// `siomq bench bus-*`: the bus scenarios of the load generator (docs/bus.md), in the shapes `nats bench`
// measures so that bench/compare.sh can run the same against nats-server (bench/peers/nats_bench.c):
//   bus-pubsub   P publishers -> C subscribers of one subject (core pub/sub, fire-and-forget pubs)
//   bus-request  request/reply round trips, `window` requests in flight, one responder
//   bus-stream   stream.pub answered once stored, `window` publishes in flight (a file stream)
//   bus-pull     a stream filled with the run's messages, then pulled in batches and each message acked
#pragma once

#include "tools/bench/load.h"

namespace siomq::bench {

bool is_bus_scenario(const std::string& scenario);
int run_bus_load(LoadOptions options);

}  // namespace siomq::bench
