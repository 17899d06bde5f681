// sos-server: the home of djava's shared objects (the directory and home
// copies of chunks) and of the distributed monitor service.
//
//   sos-server [--listen HOST:PORT] --secret-file F
//
// Listens on 127.0.0.1:7701 unless told otherwise, logs to stderr, prints
// statistics on SIGUSR1 and at exit, exits 0 on SIGTERM or SIGINT.
#include <pthread.h>
#include <signal.h>

#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <mutex>
#include <string>
#include <thread>

#include "sos_service.h"
#include "wire/secret.h"
#include "wire/service_host.h"
#ifdef DJAVA_SOS_WITH_MONITOR
#include "monitor_host.h"
#endif

namespace {

constexpr char kDefaultListen[] = "127.0.0.1:7701";

std::mutex log_mu;

void Log(const std::string& line) {
  std::time_t t = std::time(nullptr);
  std::tm tm;
  localtime_r(&t, &tm);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%H:%M:%S", &tm);
  std::lock_guard<std::mutex> l(log_mu);
  std::fprintf(stderr, "sos-server %s: %s\n", stamp, line.c_str());
  std::fflush(stderr);
}

[[noreturn]] void Usage(const std::string& why) {
  std::fprintf(stderr,
               "sos-server: %s\n"
               "usage: sos-server [--listen HOST:PORT] --secret-file FILE\n"
               "  --listen       address to serve on (default %s; loopback unless told)\n"
               "  --secret-file  the cluster secret, a file of mode 0600\n",
               why.c_str(), kDefaultListen);
  std::exit(2);
}

}  // namespace

int main(int argc, char** argv) {
  std::string listen = kDefaultListen;
  std::string secret_file;
  for (int i = 1; i < argc; i++) {
    const std::string a = argv[i];
    if (a == "--help" || a == "-h") Usage("help");
    if (i + 1 >= argc) Usage("missing value for " + a);
    const std::string v = argv[++i];
    if (a == "--listen") {
      listen = v;
    } else if (a == "--secret-file") {
      secret_file = v;
    } else {
      Usage("unknown option " + a);
    }
  }
  if (secret_file.empty()) Usage("--secret-file is required");
  // A bare port (or ":port") means loopback: binding elsewhere takes a host.
  if (listen.find(':') == std::string::npos) listen = ":" + listen;
  if (listen[0] == ':') listen = "127.0.0.1" + listen;

  std::string secret, error;
  if (!djava::wire::LoadSecret(secret_file, &secret, &error)) {
    std::fprintf(stderr, "sos-server: %s\n", error.c_str());
    return 1;
  }

  // Signals are taken by one thread with sigwait, never in a handler; every
  // other thread inherits the mask. SIGPIPE is ignored: a dead peer is an
  // error return from send.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGUSR1);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  signal(SIGPIPE, SIG_IGN);

  djava::sos::SosService sos(djava::sos::SosService::Options(), Log);
  djava::wire::ServiceHost host(secret, Log);
  host.AddService("sos", [&](std::unique_ptr<djava::wire::Connection> c, const std::string& peer) {
    sos.ServeMain(std::move(c), peer);
  });
  host.AddService("sos-bypass",
                  [&](std::unique_ptr<djava::wire::Connection> c, const std::string& peer) {
                    sos.ServeBypass(std::move(c), peer);
                  });
#ifdef DJAVA_SOS_WITH_MONITOR
  djava::monitor::MonitorHost monitors(Log);
  monitors.Register(&host);
#endif
  if (!host.Listen(listen, &error)) {
    std::fprintf(stderr, "sos-server: cannot listen on %s: %s\n", listen.c_str(), error.c_str());
    return 1;
  }
  auto stats = [&] {
    Log("statistics: " + sos.Stats());
#ifdef DJAVA_SOS_WITH_MONITOR
    Log("monitor statistics: " + monitors.Stats());
#endif
  };

  std::thread signal_thread([&] {
    for (;;) {
      int sig = 0;
      if (sigwait(&signals, &sig) != 0) continue;
      if (sig == SIGUSR1) {
        stats();
        continue;
      }
      Log(std::string("stopping on ") + (sig == SIGTERM ? "SIGTERM" : "SIGINT"));
      host.Stop();
      return;
    }
  });
  std::string where = listen.substr(0, listen.rfind(':'));
  Log("listening on " + where + ":" + std::to_string(host.port()));
  host.Run();
  signal_thread.join();
  stats();
  return 0;
}
