// The Engine.IO / HTTP transport settings of one server, fixed for each session when it opens.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>

namespace siomq::net {

struct TransportOptions {
  std::string path = "/socket.io/";
  std::chrono::milliseconds ping_interval{5000};
  std::chrono::milliseconds ping_timeout{10000};
  std::chrono::milliseconds upgrade_timeout{10000};
  // A Socket.IO client that opened an Engine.IO session but joined no namespace in this time is dropped.
  std::chrono::milliseconds connect_timeout{45000};
  // Reading one whole HTTP request (headers and body), and an idle keep-alive connection, may take this long.
  std::chrono::milliseconds http_request_timeout{20000};
  // 1 MiB: tyo-mq clients chunk every message longer than 256 KiB (PRODUCE_CHUNK), so no client needs more;
  // the reference allows 50 MiB, which lets one connection hold 50 MiB per frame. Settings and
  // TYO_MQ_MAX_HTTP_BUFFER_SIZE raise it.
  size_t max_payload = 1048576;
  size_t max_http_header = 16384;
  // Bytes queued for one connection before it counts as a slow consumer and is closed.
  size_t max_outbound_bytes = 64 * 1024 * 1024;
  bool allow_eio3 = true;
  // Client connections the whole server holds at most; one more is closed as soon as it is accepted.
  // 50,000 idle connections take about 150 MB; limits.max_connections_per_ip divides them fairly.
  size_t max_connections = 50000;
  // Bytes all connections together may hold for messages still arriving (each one's share is bounded by
  // max_payload): past it, connections holding such bytes stop reading until the total falls, and one that
  // stays paused for 10 s is closed (1013, try again later). Only a connection holding 64 KiB or more of
  // an unfinished message pauses.
  size_t max_inbound_bytes = 512 * 1024 * 1024;
};

}  // namespace siomq::net
