#include "surfaces/session.h"

namespace siomq::surfaces {

const std::string& Session::realm() const {
  static const std::string kDefault = "default";
  return grant ? grant->realm : kDefault;
}

}  // namespace siomq::surfaces
