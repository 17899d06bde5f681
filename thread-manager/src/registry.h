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
//  - every state change goes to the program's launcher and to watchers;
//  - the launcher serves the program's class files and resources, and
//    receives its console output and System.exit, from any node (relays:
//    the registry routes, remembers outstanding resource requests and
//    answers every one of them, and lets only a program's first exit pass);
//  - the launcher gathers its program's statistics from the servers that
//    ran its threads (the registry fans the request out and answers once,
//    with every server's text or why it has none, by a deadline).
#ifndef DJAVA_TM_REGISTRY_H_
#define DJAVA_TM_REGISTRY_H_

#include <cstddef>
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

// One thread server's statistics of a program, or why it has none.
struct ServerStatistics {
  std::string server;  // its name
  std::string text;
  std::string error;
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
    kResourceRequest,  // to `conn` (the launcher): resource `detail` of `thread.program`,
                       // answer with `request`
    kResourceData,     // to `conn` (a requester): answer to its `request`; `found` and
                       // `bytes`, or not found with `detail` = error ("" = no such resource)
    kConsole,          // to `conn` (the launcher): `bytes` written by `thread` on `stream`
    kExit,             // to `conn` (the launcher): System.exit(`status`), `detail` = where
    kStatisticsRequest,  // to `server`: its statistics of `thread.program`, answer `request`
    kStatisticsData,     // to `conn` (a launcher): answer to its `request`: `statistics`,
                         // or `detail` = why the request was refused
    kUnpark,             // to `server`, or else to `conn` (the launcher): unpark `thread`
                         // (`status` 1: an interrupt)
    kThreadStateQuery,   // to `server`, or else to `conn` (the launcher): the state of
                         // `thread` (and its stack, if `found`)? answer `request` to
                         // `reply_to`
    kThreadStateData,    // to `conn`: the answer to its `request`: `status`
  };
  explicit Action(Kind k) : kind(k) {}
  Kind kind;
  ServerId server = 0;
  ConnId conn = 0;
  ThreadKey thread;
  ThreadState state = ThreadState::kQueued;
  std::string detail;     // server name, exception, or failure reason
  uint64_t request = 0;   // kResourceRequest / kResourceData
  bool found = false;     // kResourceData; kThreadStateQuery: the stack is wanted
  std::string bytes;      // kResourceData, kConsole
  uint32_t stream = 0;    // kConsole: 1 = out, 2 = err, 3 = stdout, 4 = stderr
  int32_t status = 0;     // kExit
  std::vector<ServerStatistics> statistics;  // kStatisticsData
  uint64_t inherited_locals = 0;  // kAssign: SubmitThread.inherited_locals
  ConnId reply_to = 0;            // kThreadStateQuery: the asker
};

class ThreadRegistry {
 public:
  struct Options {
    TimeMs liveness_timeout_ms = 3000;  // a server silent this long is dead
    // Largest resource a ResourceData may carry: the wire's 16 MiB frame
    // limit less 64 KiB for the message's other fields (names and error
    // texts are capped far below that). = DJAVA_TM_MAX_RESOURCE_BYTES.
    size_t max_resource_bytes = (16u << 20) - (64u << 10);
    // A statistics gather answers with what it has after this long: one
    // server that does not answer must not hold up the launcher's exit.
    TimeMs statistics_timeout_ms = 3000;
  };
  // Longest statistics text forwarded per server (a longer one is cut).
  static constexpr size_t kMaxStatisticsText = 1u << 20;
  // Longest resource name accepted, and longest error text forwarded.
  static constexpr size_t kMaxResourceName = 4096;
  static constexpr size_t kMaxErrorText = 4096;
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

  // The program's processor count is fixed here, for its life: `processors`
  // if not 0 (the launcher's override), else the capacities of the servers
  // registered now added up, else `launcher_processors` (no server yet).
  std::string RegisterProgram(ProgramId id, ConnId launcher, const std::string& launch_node,
                              const std::string& classpath, uint32_t processors = 0,
                              uint32_t launcher_processors = 1);
  // inherited_locals goes to the server with the thread (SubmitThread).
  std::string Submit(ProgramId program, uint64_t thread, bool daemon, std::vector<Action>* out,
                     uint64_t inherited_locals = 0);
  std::string ThreadEnded(ServerId server, ProgramId program, uint64_t thread,
                          bool by_exception, const std::string& detail,
                          std::vector<Action>* out);
  // `conn` wants state changes of `thread`; it is told the current state now.
  std::string Watch(ConnId conn, ProgramId program, uint64_t thread, std::vector<Action>* out);
  // A connection closed: drop its watches (launchers: see ProgramEnded).
  void ConnGone(ConnId conn);
  // The program is over, however it ended: drop its queued threads, tell
  // every server that ran its threads to drop it, free its sos state.
  // Also answers the program's outstanding resource requests with an error.
  void ProgramEnded(ProgramId program, const std::string& why, std::vector<Action>* out);

  // ---- relays to the launcher ---------------------------------------------
  // `requester` wants resource `name` of `program`, `request` being its own
  // id. Forwards it to the launcher (kResourceRequest, with a request id of
  // the registry's own) or, if that is impossible (unknown or ended program,
  // bad name), answers at once with an error kResourceData. Every request is
  // answered exactly once, unless its requester goes away (ConnGone).
  void FetchResource(ConnId requester, uint64_t request, ProgramId program,
                     const std::string& name, std::vector<Action>* out);
  // The launcher's answer to the registry's `request`. A resource larger
  // than max_resource_bytes becomes an error answer naming it. An answer to
  // a request that is no longer outstanding (its requester left) is
  // ignored; "" unless `from` is not the launcher it was sent to or the id
  // was never issued.
  std::string ResourceReply(ConnId from, uint64_t request, bool found, std::string data,
                            const std::string& error, std::vector<Action>* out);
  // Console output for the program's launcher (kConsole). Returns why it
  // was dropped instead (unknown program, bad stream), for the log.
  std::string Console(ProgramId program, uint64_t thread, uint32_t stream, std::string data,
                      std::vector<Action>* out);
  // System.exit(status) somewhere in the program: the first one goes to the
  // launcher (kExit); returns why it was not forwarded (unknown program, or
  // a later exit, which is ignored as in Java), for the log.
  std::string Exit(ProgramId program, int32_t status, const std::string& detail,
                   std::vector<Action>* out);

  // The launcher `requester` wants the statistics of its `program` from
  // every server that ran threads of it (`request` being its own id):
  // kStatisticsRequest to each, and one kStatisticsData answer once all
  // have answered, gone away, or `statistics_timeout_ms` passed (Tick).
  // Answered at once if no server ran its threads, or with an error if
  // `requester` is not the program's launcher.
  void GatherStatistics(ConnId requester, uint64_t request, ProgramId program, TimeMs now,
                        std::vector<Action>* out);
  // Server `from`'s answer to the registry's `request`. "" unless `from`
  // was never asked it (a late answer, after the deadline, is ignored).
  std::string StatisticsReply(ServerId from, uint64_t request, const std::string& text,
                              std::vector<Action>* out);

  // LockSupport.unpark (`interrupt`: Thread.interrupt) of `thread` from
  // another node: to the server running
  // it, or to the launcher if the manager never placed it (the launcher's
  // own threads). Nothing for a thread queued or ended (unpark has no
  // effect on a thread not started or ended). Returns why it was dropped
  // when the program is unknown or ended, for the log.
  // Thread.getState of `thread` from connection `asker`: the question goes
  // where the thread runs (as Unpark); a thread that runs nowhere (queued,
  // ended, unknown program) is answered at once with status -1 (unknown:
  // the asker keeps its own idea). `stack_trace`: Thread.getStackTrace, the
  // thread's stack is wanted too.
  void QueryThreadState(ConnId asker, ProgramId program, uint64_t thread, uint64_t request,
                        bool stack_trace, std::vector<Action>* out);
  std::string Unpark(ProgramId program, uint64_t thread, bool interrupt,
                     std::vector<Action>* out);

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
  // The program's processor count (RegisterProgram), or 0 if unknown.
  uint32_t ProgramProcessors(ProgramId id) const;
  std::string ServerName(ServerId id) const;
  // Earliest liveness or statistics deadline, or -1 with none (for the
  // daemon's timer).
  TimeMs NextDeadline() const;
  // Resource requests forwarded to a launcher and not yet answered.
  size_t PendingFetches() const { return fetches_.size(); }
  // Statistics gathers not yet answered.
  size_t PendingGathers() const { return gathers_.size(); }

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
    uint32_t processors = 1;
    std::set<ServerId> servers_used;
    bool failed = false;
    bool exiting = false;  // an exit was forwarded: later ones are ignored
    int32_t exit_status = 0;
  };
  struct Fetch {
    ConnId requester = 0;
    uint64_t request = 0;  // the requester's id
    ProgramId program = 0;
    ConnId launcher = 0;
    std::string name;
  };
  struct Gather {
    ConnId requester = 0;
    uint64_t request = 0;  // the requester's id
    ProgramId program = 0;
    TimeMs deadline = 0;
    std::set<ServerId> waiting;  // asked, not yet answered
    std::vector<ServerStatistics> answers;
  };
  struct Thread {
    ThreadState state = ThreadState::kQueued;
    ServerId server = 0;
    bool daemon = false;
    uint64_t inherited_locals = 0;
    std::string detail;
    std::set<ConnId> watchers;
  };

  void Dispatch(std::vector<Action>* out);
  ServerId PickServer() const;
  void SetState(const ThreadKey& key, Thread* t, ThreadState s, const std::string& detail,
                std::vector<Action>* out);
  void Fail(ProgramId program, const std::string& reason, std::vector<Action>* out);
  // Answers gather `id` with what it has; `why` for each server still waiting.
  void FinishGather(uint64_t id, const std::string& why, std::vector<Action>* out);
  static void AnswerError(ConnId requester, uint64_t request, const std::string& error,
                          std::vector<Action>* out);

  Options options_;
  std::map<ServerId, Server> servers_;
  std::map<ProgramId, Program> programs_;
  std::map<ThreadKey, Thread> threads_;
  std::deque<ThreadKey> queue_;
  uint64_t assign_counter_ = 0;
  std::map<uint64_t, Fetch> fetches_;  // outstanding, by the registry's request id
  uint64_t last_fetch_ = 0;            // the last request id issued
  std::map<uint64_t, Gather> gathers_;  // outstanding, by the registry's request id
  uint64_t last_gather_ = 0;
};

}  // namespace tm
}  // namespace djava

#endif  // DJAVA_TM_REGISTRY_H_
