// `siomq raw`: one Socket.IO session driven by JSON lines on stdin, every answer and event printed as a
// JSON line on stdout (tools/raw_session.h has the line formats).
#include "tools/raw_session.h"

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>

#include <cstdio>
#include <functional>
#include <iostream>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "transport/sio_client.h"
#include "wire/base64.h"
#include "wire/json_fields.h"
#include "wire/json_spans.h"
#include "wire/socketio.h"

namespace siomq::tools {
namespace {

using client::SioClient;

// A line on stdout, flushed: the reader (a test, a script) acts on each as it comes.
void print(const std::string& line) {
  std::fwrite(line.data(), 1, line.size(), stdout);
  std::fputc('\n', stdout);
  std::fflush(stdout);
}

void append_attachments(std::string& out, const std::vector<std::string>& attachments) {
  out += ",\"attachments\":[";
  for (size_t i = 0; i < attachments.size(); ++i) {
    if (i) out.push_back(',');
    out.push_back('"');
    base64::encode_append(out, attachments[i]);
    out.push_back('"');
  }
  out.push_back(']');
}

// The arguments of an event packet's data array (its first element is the event name).
std::string event_args(const std::string& array) {
  auto elements = json_spans::array_elements(array);
  if (!elements || elements->empty()) return "[]";
  std::string out = "[";
  for (size_t i = 1; i < elements->size(); ++i) {
    if (i > 1) out.push_back(',');
    out.append((*elements)[i]);
  }
  out.push_back(']');
  return out;
}

class Session {
 public:
  Session(boost::asio::io_context& io, client::ClientOptions options)
      : io_(io), client_(std::make_shared<SioClient>(io, std::move(options))), idle_(io) {}

  int run() {
    client_->on_close([this](std::string_view reason) {
      if (closing_) return;
      std::string line = "{\"closed\":";
      sio::append_json_string(line, reason);
      line.push_back('}');
      print(line);
      status_ = connected_ ? 0 : 1;
      io_.stop();
    });
    client_->connect([this](std::optional<std::string> failure) {
      if (failure) {
        std::cerr << "siomq raw: " << *failure << "\n";
        status_ = 1;
        return;
      }
      connected_ = true;
      std::string line = "{\"connected\":true,\"sid\":";
      sio::append_json_string(line, client_->socket_id());
      line.push_back('}');
      print(line);
      start_reading();
    });
    io_.run();
    {
      // The reader may still be blocked in a read of stdin: it posts nothing more once told so.
      std::lock_guard lock(gate_->mu);
      gate_->open = false;
    }
    if (reader_.joinable()) reader_.detach();
    return status_;
  }

 private:
  // stdin is read on its own thread; each line is handed to the io thread.
  // (Not an asio stream_descriptor: stdin may be a regular file, which epoll refuses.)
  void start_reading() {
    reader_ = std::thread([this, gate = gate_] {
      std::string line;
      auto hand_over = [&](std::function<void()> f) {
        std::lock_guard lock(gate->mu);
        if (gate->open) boost::asio::post(io_, std::move(f));
        return gate->open;
      };
      while (std::getline(std::cin, line)) {
        if (!hand_over([this, line] { command(line); })) return;
      }
      hand_over([this] { end_of_input(); });
    });
  }

  void command(const std::string& line) {
    if (line.empty()) return;
    json::Fields f(line, {"emit", "args", "ack", "attachments", "on", "close"});
    auto emit = f.string("emit", false, 1024);
    auto ack = f.string("ack", false, 1024);
    auto on = f.string("on", false, 1024);
    auto close = f.boolean("close");
    auto attachments = f.strings("attachments", 1000, 64 << 20);
    if (f.error()) return error(f.error()->message);
    if (close && *close) return finish();
    if (on) {
      std::string name = *on;
      client_->on(name, [name](const SioClient::Incoming& in) {
        std::string out = "{\"event\":";
        sio::append_json_string(out, name);
        out += ",\"args\":" + event_args(in.json);
        append_attachments(out, in.attachments);
        out.push_back('}');
        print(out);
      });
      return;
    }
    if (!emit) return error("a line needs \"emit\", \"on\" or \"close\"");
    std::string args;
    if (auto raw = f.raw("args")) {
      if (raw->size() < 2 || raw->front() != '[' || raw->back() != ']') return error("args: must be an array");
      args = std::string(raw->substr(1, raw->size() - 2));
    }
    std::vector<std::string> binary;
    for (const std::string& a : attachments.value_or(std::vector<std::string>{})) {
      auto bytes = base64::decode(a);
      if (!bytes) return error("attachments: must be base64 strings");
      binary.push_back(std::move(*bytes));
    }
    SioClient::Handler on_ack;
    if (ack) {
      ++outstanding_;
      on_ack = [this, tag = *ack](const SioClient::Incoming& in) {
        std::string out = "{\"ack\":";
        sio::append_json_string(out, tag);
        out += ",\"args\":" + (in.json.empty() ? std::string("[]") : in.json);
        append_attachments(out, in.attachments);
        out.push_back('}');
        print(out);
        if (--outstanding_ == 0 && input_ended_) finish();
      };
    }
    client_->emit(*emit, args, std::move(binary), std::move(on_ack));
  }

  void error(const std::string& message) {
    std::string out = "{\"error\":";
    sio::append_json_string(out, message);
    out.push_back('}');
    print(out);
  }

  // No more commands: what was asked is awaited (10 s at most), then the session ends.
  void end_of_input() {
    input_ended_ = true;
    if (outstanding_ == 0) return finish();
    idle_.expires_after(std::chrono::seconds(10));
    idle_.async_wait([this](const boost::system::error_code& ec) {
      if (!ec) finish();
    });
  }

  void finish() {
    closing_ = true;
    client_->close();
    io_.stop();
  }

  // Whether the reader thread may still post to this session (shared with it: it may outlive us).
  struct Gate {
    std::mutex mu;
    bool open = true;
  };
  std::shared_ptr<Gate> gate_ = std::make_shared<Gate>();
  boost::asio::io_context& io_;
  std::shared_ptr<SioClient> client_;
  boost::asio::steady_timer idle_;
  std::thread reader_;
  int outstanding_ = 0;
  bool input_ended_ = false;
  bool connected_ = false;
  bool closing_ = false;
  int status_ = 0;
};

}  // namespace

int raw_session(const std::string& url, const std::string& nsp, const std::string& auth, int eio,
                const std::string& ca_file) {
  client::ClientOptions options;
  options.eio = eio;
  options.ca_file = ca_file;
  options.nsp = nsp;
  options.auth = auth;
  if (!client::parse_url(url, options)) {
    std::cerr << "siomq: bad URL " << url << "\n";
    return 2;
  }
  boost::asio::io_context io;
  Session session(io, options);
  return session.run();
}

}  // namespace siomq::tools
