#include "surfaces/client_address.h"

namespace siomq::surfaces {

std::string client_address(std::string_view peer, std::string_view forwarded_for, bool trust_proxy) {
  if (!trust_proxy || forwarded_for.empty()) return std::string(peer);
  std::string_view last = forwarded_for;
  if (size_t comma = last.rfind(','); comma != std::string_view::npos) last.remove_prefix(comma + 1);
  while (!last.empty() && last.front() == ' ') last.remove_prefix(1);
  while (!last.empty() && last.back() == ' ') last.remove_suffix(1);
  bool address = !last.empty() && last.size() <= 45 &&
                 last.find_first_not_of("0123456789abcdefABCDEF.:") == std::string_view::npos;
  return std::string(address ? last : peer);
}

}  // namespace siomq::surfaces
