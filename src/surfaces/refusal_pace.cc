#include "surfaces/refusal_pace.h"

#include "wire/clock.h"

namespace siomq::surfaces {

bool RefusalPace::paced_out(const std::string& address, const auth::LimitValues& l) {
  std::lock_guard lock(mu_);
  auto it = by_address_.find(address);
  return it != by_address_.end() &&
         it->second.take(1, l.credential_attempts_per_second, l.credential_attempt_burst, steady_ms()) != 0;
}

void RefusalPace::count_refusal(const std::string& address, const auth::LimitValues& l) {
  std::lock_guard lock(mu_);
  if (by_address_.count(address)) return;
  if (by_address_.size() >= kMaxPacedAddresses) by_address_.clear();
  (void)by_address_[address].take(1, l.credential_attempts_per_second, l.credential_attempt_burst, steady_ms());
}

}  // namespace siomq::surfaces
