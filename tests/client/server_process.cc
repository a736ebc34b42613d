#include "server_process.h"

#include <fcntl.h>
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

}  // namespace siomq::test
