#include "server_process.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

namespace siomq::test {

std::string server_binary() {
  if (const char* env = std::getenv("SIOMQ_SERVER"); env && *env) return env;
  return SIOMQ_SERVER_BIN;
}

ServerProcess::ServerProcess(Config config) : config_(std::move(config)), port_(config_.port) {
  if (!config_.dir.empty()) {
    dir_ = config_.dir;
  } else {
    char tmpl[] = "/tmp/siomq-client-test.XXXXXX";
    dir_ = mkdtemp(tmpl);
    own_dir_ = true;
  }
}

ServerProcess::~ServerProcess() {
  kill9();
  if (own_dir_) {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
}

std::string ServerProcess::log() const {
  std::ifstream in(dir_ + "/server.log");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string ServerProcess::sanitizer_report() const {
  std::string text = log();
  for (const char* marker : {"ERROR: AddressSanitizer", "ERROR: LeakSanitizer", "WARNING: ThreadSanitizer", "runtime error:"}) {
    size_t at = text.find(marker);
    if (at != std::string::npos) return text.substr(at, 2000);
  }
  return {};
}

bool ServerProcess::start(std::string* error) {
  std::vector<std::string> argv{server_binary(), "--port", std::to_string(port_), "--threads", "2",
                                "--data-dir", dir_ + "/data"};
  if (!config_.settings_json.empty()) {
    std::ofstream(dir_ + "/settings.json") << config_.settings_json;
    argv.push_back("--settings");
    argv.push_back(dir_ + "/settings.json");
  }
  for (const auto& a : config_.args) argv.push_back(a);
  std::string log_path = dir_ + "/server.log";
  {
    std::ifstream in(log_path, std::ios::ate);
    log_offset_ = in ? static_cast<size_t>(in.tellg()) : 0;
  }
  pid_ = fork();
  if (pid_ == 0) {
    int fd = open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    dup2(fd, 1);
    dup2(fd, 2);
    if (chdir(dir_.c_str()) != 0) _exit(126);
    std::vector<char*> args;
    for (auto& a : argv) args.push_back(a.data());
    args.push_back(nullptr);
    execv(args[0], args.data());
    _exit(127);
  }
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (std::chrono::steady_clock::now() < deadline) {
    std::string text = log().substr(std::min(log_offset_, log().size()));
    // The port the server listens on, from its "listening on <addr>:<port> (" line.
    size_t at = text.find("listening on ");
    size_t paren = at == std::string::npos ? at : text.find(" (", at);
    if (paren != std::string::npos) {
      size_t colon = text.rfind(':', paren);
      port_ = std::atoi(text.substr(colon + 1, paren - colon - 1).c_str());
      return true;
    }
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      if (error) *error = "server exited during start-up:\n" + text;
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (error) *error = "server did not start:\n" + log();
  kill9();
  return false;
}

void ServerProcess::kill9() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGKILL);
  int status = 0;
  waitpid(pid_, &status, 0);
  pid_ = -1;
}

bool ServerProcess::stop() {
  if (pid_ <= 0) return false;
  ::kill(pid_, SIGTERM);
  int status = 0;
  waitpid(pid_, &status, 0);
  pid_ = -1;
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

WebSocketRefusingProxy::WebSocketRefusingProxy(int server_port) : server_port_(server_port) {
  listener_ = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(listener_, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  listen(listener_, 64);
  socklen_t len = sizeof addr;
  getsockname(listener_, reinterpret_cast<sockaddr*>(&addr), &len);
  port_ = ntohs(addr.sin_port);
  accept_thread_ = std::thread([this] {
    while (!stop_) {
      pollfd p{listener_, POLLIN, 0};
      if (::poll(&p, 1, 50) <= 0) continue;
      int client = accept(listener_, nullptr, nullptr);
      if (client < 0) continue;
      std::lock_guard lock(mu_);
      fds_.push_back(client);
      workers_.emplace_back([this, client] { serve(client); });
    }
  });
}

WebSocketRefusingProxy::~WebSocketRefusingProxy() {
  stop_ = true;
  accept_thread_.join();
  {
    std::lock_guard lock(mu_);
    for (int fd : fds_) shutdown(fd, SHUT_RDWR);
  }
  for (auto& w : workers_) w.join();
  for (int fd : fds_) close(fd);
  close(listener_);
}

// One client connection: the first request's head decides; then bytes are copied both ways.
void WebSocketRefusingProxy::serve(int client) {
  std::string head;
  char buf[65536];
  while (head.find("\r\n\r\n") == std::string::npos) {
    ssize_t n = read(client, buf, sizeof buf);
    if (n <= 0) return;
    head.append(buf, static_cast<size_t>(n));
  }
  if (head.find("transport=websocket") != std::string::npos) {
    ++refused_;
    const char refusal[] = "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
    (void)!write(client, refusal, sizeof refusal - 1);
    shutdown(client, SHUT_RDWR);
    return;
  }
  int server = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(server_port_));
  if (connect(server, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) return (void)close(server);
  {
    std::lock_guard lock(mu_);
    fds_.push_back(server);
  }
  (void)!write(server, head.data(), head.size());
  pollfd fds[2] = {{client, POLLIN, 0}, {server, POLLIN, 0}};
  while (!stop_) {
    if (::poll(fds, 2, 50) < 0) break;
    bool done = false;
    for (int i = 0; i < 2; ++i) {
      if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      ssize_t n = read(fds[i].fd, buf, sizeof buf);
      if (n <= 0 || write(fds[1 - i].fd, buf, static_cast<size_t>(n)) != n) done = true;
    }
    if (done) break;
  }
  shutdown(client, SHUT_RDWR);
  shutdown(server, SHUT_RDWR);
}

}  // namespace siomq::test
