// Refused credentials paced per remote address, for the namespaces whose CONNECT carries a credential
// ("/control", "/console"): each CONNECT is a new namespace socket, on as many connections as wanted, so a
// per-socket pace would not slow a guesser. Once an address has been refused, each of its CONNECTs takes
// an attempt from its bucket (the default realm's credential_attempts_per_second and burst), and one that
// finds none is refused without its credential being looked at.
//
// Threading: any thread (one mutex). Memory: at most kMaxPacedAddresses addresses; past it the table
// starts again (an attacker with this many addresses is not slowed by a per-address pace anyway).
#pragma once

#include <mutex>
#include <string>
#include <unordered_map>

#include "auth/limits.h"

namespace siomq::surfaces {

class RefusalPace {
 public:
  static constexpr size_t kMaxPacedAddresses = 10000;

  // Whether a CONNECT from `address` is refused before its credential is checked (takes an attempt).
  bool paced_out(const std::string& address, const auth::LimitValues& limits);
  // A refusal from an address not yet paced starts its pace (paced_out took the attempts of the others).
  void count_refusal(const std::string& address, const auth::LimitValues& limits);

 private:
  std::mutex mu_;
  std::unordered_map<std::string, auth::TokenBucket> by_address_;
};

}  // namespace siomq::surfaces
