#include "wire/daemon.h"

#include <pthread.h>

#include <atomic>
#include <cstdio>
#include <ctime>
#include <memory>
#include <mutex>
#include <thread>

namespace djava {
namespace wire {

ServiceHost::Log StderrLog(std::string program) {
  auto mu = std::make_shared<std::mutex>();
  return [program = std::move(program), mu](const std::string& line) {
    std::time_t t = std::time(nullptr);
    std::tm tm;
    localtime_r(&t, &tm);
    char stamp[32];
    std::strftime(stamp, sizeof stamp, "%H:%M:%S", &tm);
    std::lock_guard<std::mutex> l(*mu);
    std::fprintf(stderr, "%s %s: %s\n", program.c_str(), stamp, line.c_str());
    std::fflush(stderr);
  };
}

DaemonSignals::DaemonSignals() {
  sigemptyset(&signals_);
  sigaddset(&signals_, SIGTERM);
  sigaddset(&signals_, SIGINT);
  sigaddset(&signals_, SIGUSR1);
  pthread_sigmask(SIG_BLOCK, &signals_, nullptr);
  signal(SIGPIPE, SIG_IGN);
}

int DaemonSignals::Run(ServiceHost* host, const std::function<void()>& print_stats,
                       const ServiceHost::Log& log) {
  std::atomic<bool> signalled{false};
  std::thread signal_thread([&] {
    for (;;) {
      int sig = 0;
      if (sigwait(&signals_, &sig) != 0) continue;
      if (sig == SIGUSR1) {
        print_stats();
        continue;
      }
      // The first stop signal, or the host's own end (below), which sends
      // SIGTERM to this thread only to wake it.
      if (!signalled.exchange(true))
        log(std::string("stopping on ") + (sig == SIGTERM ? "SIGTERM" : "SIGINT"));
      host->Stop();
      return;
    }
  });
  host->Run();
  int status = 0;
  if (!signalled.exchange(true)) {
    status = 1;
    pthread_kill(signal_thread.native_handle(), SIGTERM);
  }
  signal_thread.join();
  print_stats();
  return status;
}

}  // namespace wire
}  // namespace djava
