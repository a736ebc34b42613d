// A real siomq-server for the client library's tests: started on a free port (or a given one, for a
// restart on the same address) in a temporary directory, its output in a log file that the test checks
// for sanitizer reports when it ends.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <mutex>
#include <thread>

#include <string>
#include <vector>

namespace siomq::test {

class ServerProcess {
 public:
  struct Config {
    std::string settings_json;          // written as --settings when not empty
    std::vector<std::string> args;      // extra arguments
    int port = 0;                       // 0: a free one
    std::string dir;                    // reuse a directory (data survives a restart); empty: a new one
  };

  ServerProcess() : ServerProcess(Config()) {}
  explicit ServerProcess(Config config);
  ~ServerProcess();  // SIGKILL if still running; removes the directory unless it was given

  // Starts and waits for "listening on"; false (with the log in `error`) when it did not start.
  bool start(std::string* error = nullptr);
  void kill9();      // kill -9 and wait
  bool stop();       // SIGTERM, true when it exited 0
  bool restart(std::string* error = nullptr) { kill9(); return start(error); }

  int port() const { return port_; }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  const std::string& dir() const { return dir_; }
  std::string log() const;
  // A sanitizer's report in the log, or "" — tests assert it is empty.
  std::string sanitizer_report() const;

 private:
  Config config_;
  std::string dir_;
  bool own_dir_ = false;
  pid_t pid_ = -1;
  int port_ = 0;
  size_t log_offset_ = 0;  // where this run's output starts in the log
};

// A proxy in front of a server that refuses every WebSocket upgrade (HTTP 400) and passes everything
// else through: what a client meets behind a proxy that does not carry WebSocket.
class WebSocketRefusingProxy {
 public:
  explicit WebSocketRefusingProxy(int server_port);
  ~WebSocketRefusingProxy();
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  int refused() const { return refused_; }

 private:
  void serve(int client);
  int server_port_;
  int listener_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<int> refused_{0};
  std::thread accept_thread_;
  std::mutex mu_;
  std::vector<std::thread> workers_;
  std::vector<int> fds_;
};

// The server binary: $SIOMQ_SERVER, else the one built with the tests.
std::string server_binary();

}  // namespace siomq::test
