// A Redis server's address as a URL: redis://[[user]:password@]host[:port][/db] (user and password
// percent-decoded, host "[...]" for IPv6). Used by the redis store and by the cluster. Pure; any thread.
#pragma once

#include <string>
#include <string_view>

#include "wire/result.h"

namespace siomq::redis {

struct Url {
  std::string host = "127.0.0.1";
  int port = 6379;
  std::string user;  // empty: AUTH with the password alone
  std::string password;
  int db = 0;
  // host:port, for logs (never the password).
  std::string where() const;
};

// The URL read, or a 400 naming what is wrong with it.
Result<Url> parse_url(std::string_view text);

}  // namespace siomq::redis
