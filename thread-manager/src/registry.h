// ThreadRegistry: the thread manager's state machine, with no I/O and with
// time passed in, so that placement, queueing, lifecycle and failure handling
// are tested deterministically. The daemon feeds it decoded messages and sends
// the Actions it returns.
//
// Model (after the seed's §3.1: a queue of threads and a queue of servers):
//  - servers register with a capacity and must heartbeat before a deadline;
//  - programs register and submit threads (named by program id + the shared
//    id of the Thread object);
//  - a thread is placed on the server with the fewest running threads that
//    has spare capacity, FIFO among equals (least recently given a thread);
//    with no capacity anywhere it waits in one global FIFO queue;
//  - every state change goes to the program's launcher and to watchers.
#ifndef DJAVA_TM_REGISTRY_H_
#define DJAVA_TM_REGISTRY_H_

#include <cstdint>
#include <deque>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace djava {
namespace tm {

using ServerId = uint64_t;
using ProgramId = uint64_t;
using ConnId = uint64_t;  // a subscriber: one client connection of the daemon
using TimeMs = int64_t;   // monotonic milliseconds, supplied by the caller

struct ThreadKey {
  ProgramId program = 0;
  uint64_t thread = 0;
  bool operator<(const ThreadKey& o) const {
    return program != o.program ? program < o.program : thread < o.thread;
  }
  bool operator==(const ThreadKey& o) const {
    return program == o.program && thread == o.thread;
  }
};

enum class ThreadState { kQueued, kRunning, kEnded, kEndedByException, kFailed };
const char* ThreadStateName(ThreadState s);

// Something the daemon must do as a consequence of an input.
struct Action {
  enum Kind {
    kAssign,         // to `server`: run `thread`
    kStateChanged,   // to `conn`: `thread` is now `state` (on `server`)
    kProgramFailed,  // to `conn` (the launcher): program `thread.program` failed
    kDropProgram,    // to `server`: forget program `thread.program`
    kFreeProgram,    // to the sos-server(s): free the program's chunks and monitors
  };
  explicit Action(Kind k) : kind(k) {}
  Kind kind;
  ServerId server = 0;
  ConnId conn = 0;
  ThreadKey thread;
  ThreadState state = ThreadState::kQueued;
  std::string detail;     // server name, exception, or failure reason
};

class ThreadRegistry {
 public:
  struct Options {
    TimeMs liveness_timeout_ms = 3000;  // a server silent this long is dead
  };
  ThreadRegistry() : ThreadRegistry(Options()) {}
  explicit ThreadRegistry(Options options) : options_(options) {}

  // Each input returns "" on success or an error message (protocol misuse by
  // the caller; the daemon reports it to that connection only).
  std::string RegisterServer(ServerId id, const std::string& name, uint32_t capacity,
                             TimeMs now, std::vector<Action>* out);
  std::string Heartbeat(ServerId id, TimeMs now);
  // The server disconnected (or was declared dead): fail what it ran.
  void ServerGone(ServerId id, const std::string& why, std::vector<Action>* out);
  // Declares dead every server whose liveness deadline passed.
  void Tick(TimeMs now, std::vector<Action>* out);

  std::string RegisterProgram(ProgramId id, ConnId launcher, const std::string& launch_node,
                              const std::string& classpath);
  std::string Submit(ProgramId program, uint64_t thread, bool daemon, std::vector<Action>* out);
  std::string ThreadEnded(ServerId server, ProgramId program, uint64_t thread,
                          bool by_exception, const std::string& detail,
                          std::vector<Action>* out);
  // `conn` wants state changes of `thread`; it is told the current state now.
  std::string Watch(ConnId conn, ProgramId program, uint64_t thread, std::vector<Action>* out);
  // A connection closed: drop its watches (launchers: see ProgramEnded).
  void ConnGone(ConnId conn);
  // The program is over, however it ended: drop its queued threads, tell
  // every server that ran its threads to drop it, free its sos state.
  void ProgramEnded(ProgramId program, const std::string& why, std::vector<Action>* out);

  // ---- introspection -------------------------------------------------------
  bool HasServer(ServerId id) const { return servers_.count(id) != 0; }
  bool HasProgram(ProgramId id) const { return programs_.count(id) != 0; }
  int Running(ServerId id) const;
  size_t QueueLength() const { return queue_.size(); }
  bool Lookup(ThreadKey key, ThreadState* state, ServerId* server) const;
  // Threads of the program not yet ended (queued or running), non-daemon only.
  int LiveNonDaemon(ProgramId program) const;
  // Program ids whose launcher is `conn`.
  std::vector<ProgramId> ProgramsOf(ConnId conn) const;
  bool ProgramInfo(ProgramId id, std::string* launch_node, std::string* classpath) const;
  std::string ServerName(ServerId id) const;
  // Earliest liveness deadline, or -1 with no servers (for the daemon's timer).
  TimeMs NextDeadline() const;

 private:
  struct Server {
    std::string name;
    uint32_t capacity = 0;
    std::set<ThreadKey> running;
    uint64_t last_assigned = 0;  // FIFO among equally loaded servers
    TimeMs deadline = 0;
  };
  struct Program {
    ConnId launcher = 0;
    std::string launch_node;
    std::string classpath;
    std::set<ServerId> servers_used;
    bool failed = false;
  };
  struct Thread {
    ThreadState state = ThreadState::kQueued;
    ServerId server = 0;
    bool daemon = false;
    std::string detail;
    std::set<ConnId> watchers;
  };

  void Dispatch(std::vector<Action>* out);
  ServerId PickServer() const;
  void SetState(const ThreadKey& key, Thread* t, ThreadState s, const std::string& detail,
                std::vector<Action>* out);
  void Fail(ProgramId program, const std::string& reason, std::vector<Action>* out);

  Options options_;
  std::map<ServerId, Server> servers_;
  std::map<ProgramId, Program> programs_;
  std::map<ThreadKey, Thread> threads_;
  std::deque<ThreadKey> queue_;
  uint64_t assign_counter_ = 0;
};

}  // namespace tm
}  // namespace djava

#endif  // DJAVA_TM_REGISTRY_H_
