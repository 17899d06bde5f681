// thread-manager: the cluster's address. Thread servers and launchers
// connect here; it places Java threads on servers and tracks their lifecycle
// (see docs/THREAD-MANAGER.md).
//
//   thread-manager --listen HOST:PORT --sos HOST:PORT[,HOST:PORT...]
//                  --secret-file F [--liveness-ms N] [--heartbeat-ms N]
//                  [--transport auto|ucx|tcp]
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "tm_daemon.h"
#include "wire/connection.h"
#include "wire/ucx_channel.h"

namespace {

[[noreturn]] void Usage(const char* why) {
  std::fprintf(stderr,
               "thread-manager: %s\n"
               "usage: thread-manager --listen HOST:PORT --sos HOST:PORT[,...] "
               "--secret-file F [--liveness-ms N] [--heartbeat-ms N] "
               "[--transport auto|ucx|tcp]\n",
               why);
  std::exit(2);
}

}  // namespace

int main(int argc, char** argv) {
  djava::tm::DaemonConfig cfg;
  for (int i = 1; i < argc; i++) {
    std::string a = argv[i];
    if (i + 1 >= argc) Usage(("missing value for " + a).c_str());
    std::string v = argv[++i];
    if (a == "--listen") {
      cfg.listen = v;
    } else if (a == "--sos") {
      for (const std::string& one : djava::wire::SplitAddressList(v))
        cfg.sos_servers.push_back(one);
    } else if (a == "--secret-file") {
      cfg.secret_file = v;
    } else if (a == "--liveness-ms") {
      cfg.liveness_ms = std::atoll(v.c_str());
    } else if (a == "--transport") {
      djava::wire::Transport t;
      if (!djava::wire::ParseTransport(v, &t)) Usage("--transport takes auto, ucx or tcp");
      djava::wire::SetProcessTransport(t);
    } else if (a == "--heartbeat-ms") {
      cfg.heartbeat_ms = std::atoi(v.c_str());
    } else {
      Usage(("unknown option " + a).c_str());
    }
  }
  if (cfg.listen.empty()) Usage("--listen is required");
  if (cfg.sos_servers.empty()) Usage("--sos is required");
  if (cfg.secret_file.empty()) Usage("--secret-file is required");
  djava::wire::Transport transport;
  std::string transport_error;
  if (!djava::wire::ProcessTransport(&transport, &transport_error)) Usage(transport_error.c_str());
  if (cfg.liveness_ms <= 0 || cfg.heartbeat_ms <= 0 || cfg.heartbeat_ms * 2 > cfg.liveness_ms)
    Usage("need 0 < 2 * heartbeat-ms <= liveness-ms");
  return djava::tm::RunDaemon(cfg);
}
