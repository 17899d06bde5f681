// The thread-manager daemon: TmService on the wire library's server, with a
// timer for liveness deadlines and a monitor-service connection to every sos
// shard to free ended programs.
#ifndef DJAVA_TM_TM_DAEMON_H_
#define DJAVA_TM_TM_DAEMON_H_

#include <cstdint>
#include <string>
#include <vector>

namespace djava {
namespace tm {

struct DaemonConfig {
  std::string listen;
  std::vector<std::string> sos_servers;
  std::string secret_file;
  int64_t liveness_ms = 3000;
  int heartbeat_ms = 500;
};

// Serves until killed; returns a process exit status on a fatal error.
int RunDaemon(const DaemonConfig& cfg);

}  // namespace tm
}  // namespace djava

#endif  // DJAVA_TM_TM_DAEMON_H_
