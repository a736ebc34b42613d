// The server's WebSocket connection over a real loopback TCP pair: its transport receipts (when_written),
// which tell the durable queues that the frames queued before have left for the peer.
#include "net/websocket_connection.h"

#include "wire/websocket.h"

#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>

#include <boost/asio/write.hpp>

#include <sys/socket.h>

#include <atomic>
#include <chrono>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace siomq::net {
namespace {

namespace asio = boost::asio;
using asio::ip::tcp;
using namespace std::chrono_literals;

struct Pair {
  asio::io_context io;
  tcp::socket client{io};
  std::shared_ptr<WebSocketConnection> server;

  Pair() {
    tcp::acceptor acceptor(io, tcp::endpoint(asio::ip::address_v4::loopback(), 0));
    client.connect(acceptor.local_endpoint());
    tcp::socket accepted(io);
    acceptor.accept(accepted);
    server = std::make_shared<WebSocketConnection>(std::move(accepted), 1 << 20, false);
    server->start(nullptr);
  }
  // Runs the loop until `done` holds or `limit` passes.
  template <class F>
  void run_until(F done, std::chrono::milliseconds limit = 2000ms) {
    auto until = std::chrono::steady_clock::now() + limit;
    while (!done() && std::chrono::steady_clock::now() < until) io.run_for(10ms);
  }
};

TEST(WebSocketConnectionReceipts, NothingQueuedAnswersAtOnce) {
  Pair p;
  std::optional<bool> got;
  p.server->when_written([&](bool sent) { got = sent; });
  EXPECT_EQ(got, std::optional<bool>(true));
}

TEST(WebSocketConnectionReceipts, AnsweredOnceTheFramesAreWritten) {
  Pair p;
  p.server->send(text_frame("4hello"));
  std::optional<bool> got;
  p.server->when_written([&](bool sent) { got = sent; });
  EXPECT_FALSE(got.has_value());  // queued, not written yet
  p.run_until([&] { return got.has_value(); });
  EXPECT_EQ(got, std::optional<bool>(true));
  char buf[8];
  asio::read(p.client, asio::buffer(buf, 8));  // 2 bytes of header, then the frame itself
  EXPECT_EQ(std::string(buf + 2, 6), "4hello");
}

TEST(WebSocketConnectionReceipts, APeerThatDoesNotReadHoldsTheReceiptAndItsCloseSaysNotSent) {
  Pair p;
  std::string big(1 << 20, 'x');
  for (int i = 0; i < 64; ++i) p.server->send(text_frame(big));  // far more than the socket buffers hold
  std::optional<bool> got;
  p.server->when_written([&](bool sent) { got = sent; });
  p.run_until([&] { return got.has_value(); }, 300ms);
  EXPECT_FALSE(got.has_value());
  p.client.close();
  p.run_until([&] { return got.has_value(); }, 7000ms);  // the write fails, or the close deadline resets it
  EXPECT_EQ(got, std::optional<bool>(false));
}

// A frame as the client reads it.
struct Frame {
  int opcode;
  std::string payload;
};

// Ends a reader's wait for bytes that will not come.
void stop_reading(tcp::socket& client) { ::shutdown(client.native_handle(), SHUT_RDWR); }

// A reader that stops after `after` frames (sets `reached`) until `resume` is set.
struct ReadPause {
  size_t after = 0;
  std::atomic<bool> reached{false}, resume{false};
};

// Reads server frames (unmasked, unfragmented) from `client` until `count` have come or a read fails
// (stop_reading() makes it fail, so that a test that goes wrong ends rather than hangs).
std::vector<Frame> read_frames(tcp::socket& client, size_t count, ReadPause* pause = nullptr) {
  std::vector<Frame> frames;
  boost::system::error_code ec;
  while (frames.size() < count) {
    if (pause && frames.size() == pause->after) {
      pause->reached = true;
      while (!pause->resume) std::this_thread::sleep_for(5ms);
    }
    unsigned char h[2];
    if (asio::read(client, asio::buffer(h, 2), ec) != 2) break;
    uint64_t len = h[1] & 0x7f;
    size_t extra = len == 126 ? 2 : len == 127 ? 8 : 0;
    unsigned char ext[8];
    if (extra && asio::read(client, asio::buffer(ext, extra), ec) != extra) break;
    if (extra) {
      len = 0;
      for (size_t i = 0; i < extra; ++i) len = len << 8 | ext[i];
    }
    std::string payload(len, '\0');
    if (len && asio::read(client, asio::buffer(payload), ec) != len) break;
    frames.push_back({h[0] & 0x0f, std::move(payload)});
  }
  return frames;
}

// Waits until everything queued is written (the receipt's answer), lets `reader` take the last bytes,
// then ends its reading and joins it.
std::optional<bool> written_and_read(Pair& p, std::thread& reader) {
  auto written = std::make_shared<std::optional<bool>>();  // (a receipt answered late finds it alive)
  p.server->when_written([written](bool ok) { *written = ok; });
  p.run_until([&] { return written->has_value(); }, 10'000ms);
  p.run_until([] { return false; }, 100ms);
  stop_reading(p.client);
  reader.join();
  return *written;
}

// Frames sent while a write waits for the peer go out after it, whole and in order, small and large
// alike: the frames in flight stay at the head of the queue, their bytes alive, until their write is done.
TEST(WebSocketConnectionWrites, FramesQueuedDuringAWaitingWriteFollowItInOrder) {
  Pair p;
  std::vector<std::string> sent;
  auto send = [&](std::string s) {
    sent.push_back(s);
    p.server->send(text_frame(std::move(s)));
  };
  for (int i = 0; i < 40; ++i) send(std::string(i % 3 == 0 ? 1'000'000 : 100, static_cast<char>('a' + i % 26)));
  p.run_until([] { return false; }, 50ms);  // the first write fills the socket's buffers and waits
  ASSERT_GT(p.server->queued_bytes(), 0u);
  for (int i = 0; i < 40; ++i) send("late " + std::to_string(i) + std::string(i % 5 == 0 ? 200'000 : 10, 'z'));
  std::vector<Frame> got;
  std::thread reader([&] { got = read_frames(p.client, sent.size()); });
  std::optional<bool> written = written_and_read(p, reader);
  EXPECT_EQ(written, std::optional<bool>(true));
  ASSERT_EQ(got.size(), sent.size());
  for (size_t i = 0; i < sent.size(); ++i) {
    EXPECT_EQ(got[i].payload.size(), sent[i].size()) << "frame " << i;
    EXPECT_TRUE(got[i].payload == sent[i]) << "frame " << i;
  }
}

// A ping that comes while a pong is in a write under way gets its own pong after it. (The pong waiting
// in the queue is replaced by a newer one, RFC 6455 5.5.3; a pong already given to the socket cannot be:
// replacing it lost the newer answer.)
TEST(WebSocketConnectionWrites, APingDuringAWriteHoldingAPongIsAnsweredAfterIt) {
  Pair p;
  auto ping = [&](const std::string& payload) {  // masked with a zero key, as a client must mask
    std::string f{static_cast<char>(0x89), static_cast<char>(0x80 | payload.size()), 0, 0, 0, 0};
    asio::write(p.client, asio::buffer(f + payload));
    p.run_until([] { return false; }, 50ms);
  };
  std::string big(1'000'000, 'b');
  for (int i = 0; i < 14; ++i) p.server->send(text_frame(big));  // write 1: waits for the peer
  p.run_until([] { return false; }, 50ms);
  ASSERT_GT(p.server->queued_bytes(), 0u);
  ping("p1");                                                     // its pong waits behind write 1
  for (int i = 0; i < 14; ++i) p.server->send(text_frame(big));  // ... and leads write 2
  ReadPause pause;
  pause.after = 14;
  std::vector<Frame> got;
  std::thread reader([&] { got = read_frames(p.client, 30, &pause); });  // reads write 1, then stops
  p.run_until([&] { return pause.reached.load(); }, 5000ms);
  p.run_until([] { return false; }, 100ms);  // write 1 is done: write 2 (the pong, then 14 MB) waits
  ping("p2");
  pause.resume = true;
  std::optional<bool> written = written_and_read(p, reader);
  EXPECT_EQ(written, std::optional<bool>(true));
  ASSERT_EQ(got.size(), 30u);
  EXPECT_EQ(got[14].opcode, 0xA);
  EXPECT_EQ(got[14].payload, "p1");
  EXPECT_EQ(got[29].opcode, 0xA);
  EXPECT_EQ(got[29].payload, "p2");
}

// A close while a write waits: the frames in flight are kept until the connection goes (a write Asio
// was given may still complete), the rest are dropped, and receipts say "not sent".
TEST(WebSocketConnectionWrites, AResetDuringAWaitingWriteAnswersReceiptsAndKeepsNothingElse) {
  Pair p;
  std::string big(1 << 20, 'x');
  for (int i = 0; i < 16; ++i) p.server->send(text_frame(big));
  p.run_until([] { return false; }, 50ms);
  std::optional<bool> written;
  p.server->when_written([&](bool ok) { written = ok; });
  p.client.set_option(asio::socket_base::linger(true, 0));
  p.client.close();  // a reset: the waiting write fails
  p.run_until([&] { return written.has_value(); }, 7000ms);
  EXPECT_EQ(written, std::optional<bool>(false));
  EXPECT_EQ(p.server->queued_bytes(), 0u);
}

// Issue 12 item 6: a server-wide budget for what connections hold of messages still arriving. Past it a
// connection holding part of a frame stops reading (TCP pushes back on the sender) until there is room.
// The pause is observed before the rest of the frame is sent, so the test does not depend on how the
// kernel splits the bytes into reads (under load one read could take everything that was sent).
TEST(WebSocketConnectionInbound, ReadingPausesOverTheServerBudgetAndResumesWithRoom) {
  Pair p;
  InboundBudget::set_limit(100 * 1024);
  // The first 900 KB of a 1 MB frame (mask key zero: the payload goes as it is): 200 KB, then the rest
  // once the server has paused.
  uint8_t h[ws::kMaxHeaderSize];
  const uint8_t key[4] = {0, 0, 0, 0};
  size_t n = ws::encode_header(h, ws::Opcode::kBinary, true, 1000000, key);
  std::string first(reinterpret_cast<char*>(h), n);
  first.append(200000, 'x');
  const std::string rest(700000, 'x');
  std::atomic<bool> paused{false};
  std::thread writer([&] {
    asio::write(p.client, asio::buffer(first));
    while (!paused) std::this_thread::sleep_for(1ms);
    asio::write(p.client, asio::buffer(rest));
  });
  p.run_until([] { return InboundBudget::total() > 100u * 1024; }, 5000ms);
  const size_t paused_at = InboundBudget::total();
  EXPECT_GT(paused_at, 100u * 1024);  // the read that passed the budget is kept
  paused = true;
  p.run_until([] { return false; }, 300ms);
  EXPECT_EQ(InboundBudget::total(), paused_at);  // but no more is read, though more has come
  InboundBudget::set_limit(0);                   // room again
  p.run_until([] { return InboundBudget::total() >= 900000; }, 2000ms);
  EXPECT_GE(InboundBudget::total(), 900000u);
  writer.join();
  p.client.close();
  p.run_until([] { return InboundBudget::total() == 0; }, 2000ms);
  EXPECT_EQ(InboundBudget::total(), 0u);  // a closed connection gives its share back
}

}  // namespace
}  // namespace siomq::net
