#include "auth/hmac.h"

#include <openssl/evp.h>
#include <openssl/hmac.h>

namespace siomq::auth {

std::string hmac_sha256(std::string_view key, std::string_view data) {
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()), reinterpret_cast<const unsigned char*>(data.data()),
       data.size(), mac, &len);
  return std::string(reinterpret_cast<const char*>(mac), len);
}

}  // namespace siomq::auth
