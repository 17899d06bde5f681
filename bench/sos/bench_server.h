// A sos-server child process for the benchmarks of bench/sos, on a free
// loopback port with a fresh cluster secret (0600 in a private directory),
// and clients of it through the node's C ABI; whole reads and writes for
// the benchmarks' processes.
#ifndef DJAVA_BENCH_SOS_BENCH_SERVER_H_
#define DJAVA_BENCH_SOS_BENCH_SERVER_H_

#include <arpa/inet.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <string>
#include <vector>

#include "djava/sos_client.h"

namespace djava {
namespace bench {

// Whole reads and writes on a pipe or socket: false when it ended or failed.
inline bool WriteFull(int fd, const void* data, size_t n) {
  const char* p = static_cast<const char*>(data);
  while (n > 0) {
    ssize_t w = write(fd, p, n);
    if (w <= 0) return false;
    p += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}

inline bool ReadFull(int fd, void* data, size_t n) {
  char* p = static_cast<char*>(data);
  while (n > 0) {
    ssize_t r = read(fd, p, n);
    if (r <= 0) return false;
    p += r;
    n -= static_cast<size_t>(r);
  }
  return true;
}

// A node of the cluster at `servers` (one address, or shards' in order);
// null with *error.
inline djava_sos_client* ConnectNode(const std::string& servers, const std::string& secret_file,
                                     const char* name, std::string* error) {
  djava_sos_config config{servers.c_str(), secret_file.c_str(), name, nullptr};
  djava_sos_client* c = nullptr;
  djava_sos_error e{};
  if (djava_sos_connect(&config, &c, &e) != DJAVA_SOS_OK) {
    *error = e.message;
    return nullptr;
  }
  return c;
}

class BenchServer {
 public:
  // Starts `binary` with `args` after its --listen and --secret-file and
  // waits (up to 10 s) until it listens. False with *error. With
  // `secret_file`, the server shares that secret (another server's, for a
  // cluster of several); else it gets a fresh one.
  bool Start(const std::string& binary, const std::vector<std::string>& args,
             std::string* error, const std::string& secret_file = "") {
    if (!secret_file.empty()) {
      secret_file_ = secret_file;
    } else {
      char tmpl[] = "/tmp/sos-bench-XXXXXX";
      if (mkdtemp(tmpl) == nullptr) return Fail(error, "mkdtemp failed");
      dir_ = tmpl;
      secret_file_ = dir_ + "/secret";
      std::ofstream(secret_file_)
          << "sos-bench secret " << getpid() << " "
          << std::chrono::steady_clock::now().time_since_epoch().count();
      chmod(secret_file_.c_str(), 0600);
    }
    // A free port: bind 0, read it, close; the server binds it next.
    int s = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    bind(s, reinterpret_cast<sockaddr*>(&a), sizeof a);
    getsockname(s, reinterpret_cast<sockaddr*>(&a), &len);
    close(s);
    address_ = "127.0.0.1:" + std::to_string(ntohs(a.sin_port));
    std::vector<std::string> argv_strings = {binary, "--listen", address_, "--secret-file",
                                             secret_file_};
    argv_strings.insert(argv_strings.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (std::string& arg : argv_strings) argv.push_back(&arg[0]);
    argv.push_back(nullptr);
    pid_ = fork();
    if (pid_ == 0) {
      int null = open("/dev/null", O_WRONLY);
      dup2(null, 2);
      execv(binary.c_str(), argv.data());
      _exit(127);
    }
    for (int i = 0; i < 200; i++) {  // up to 10 s for it to listen
      int c = socket(AF_INET, SOCK_STREAM, 0);
      bool up = connect(c, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
      close(c);
      if (up) return true;
      int status;
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        return Fail(error, "sos-server exited at start: " + binary);
      }
      usleep(50000);
    }
    return Fail(error, "sos-server did not listen on " + address_);
  }

  // A node of the cluster; null with *error.
  djava_sos_client* Connect(const char* name, std::string* error) const {
    return ConnectNode(address_, secret_file_, name, error);
  }

  void Stop() {
    if (pid_ > 0) {
      kill(pid_, SIGTERM);
      waitpid(pid_, nullptr, 0);
      pid_ = -1;
    }
    if (!dir_.empty()) {
      unlink(secret_file_.c_str());
      rmdir(dir_.c_str());
      dir_.clear();
    }
  }

  const std::string& address() const { return address_; }
  const std::string& secret_file() const { return secret_file_; }
  pid_t pid() const { return pid_; }

 private:
  static bool Fail(std::string* error, const std::string& why) {
    *error = why;
    return false;
  }

  std::string address_, secret_file_, dir_;
  pid_t pid_ = -1;
};

// N sos-servers splitting one directory (--shard I/N), sharing a secret;
// nodes reach them by the list of their addresses.
class BenchShards {
 public:
  bool Start(const std::string& binary, size_t shards, const std::vector<std::string>& args,
             std::string* error) {
    servers_.resize(shards);
    for (size_t i = 0; i < shards; i++) {
      std::vector<std::string> a = args;
      if (shards > 1) {
        a.push_back("--shard");
        a.push_back(std::to_string(i) + "/" + std::to_string(shards));
      }
      if (!servers_[i].Start(binary, a, error, i == 0 ? "" : servers_[0].secret_file()))
        return false;
      address_ += (i == 0 ? "" : ",") + servers_[i].address();
    }
    return true;
  }
  djava_sos_client* Connect(const char* name, std::string* error) const {
    return ConnectNode(address_, secret_file(), name, error);
  }
  void Stop() {
    // The first last: it holds the shared secret's directory.
    for (size_t i = servers_.size(); i-- > 0;) servers_[i].Stop();
  }
  const std::string& address() const { return address_; }
  const std::string& secret_file() const { return servers_[0].secret_file(); }
  std::vector<pid_t> pids() const {
    std::vector<pid_t> out;
    for (const BenchServer& s : servers_) out.push_back(s.pid());
    return out;
  }

 private:
  std::vector<BenchServer> servers_;
  std::string address_;
};

}  // namespace bench
}  // namespace djava

#endif  // DJAVA_BENCH_SOS_BENCH_SERVER_H_
