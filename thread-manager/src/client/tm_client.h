// TmClient: a node's connection to the thread manager. One reader thread
// turns the manager's messages into events (a queue for the caller, plus a
// table of known thread states for join/isAlive) and hands resource answers
// to the threads blocked in FetchResource; a server's client also runs a
// heartbeat thread. The C ABI (include/djava/tm_client.h) wraps it.
//
// Locks: mu_ guards the state; send_mu_ serialises Channel::Send (taken
// after mu_ when both are held). Large sends (resource answers, console
// output) hold only send_mu_, so the reader is never stalled behind them.
#ifndef DJAVA_TM_CLIENT_TM_CLIENT_H_
#define DJAVA_TM_CLIENT_TM_CLIENT_H_

#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "djava/channel.h"
#include "djava/tm_client.h"
#include "tm.pb.h"

namespace djava {
namespace tm {

class TmClient {
 public:
  explicit TmClient(std::unique_ptr<Channel> channel);
  ~TmClient();

  // "" on success, else why.
  // `processors`: the launcher's override (0: the cluster's), and its own
  // count for a cluster with no thread server; *answer: the program's count.
  std::string RegisterProgram(uint64_t program, const std::string& node, const std::string& cp,
                              uint32_t processors = 0, uint32_t launcher_processors = 1,
                              uint32_t* answer = nullptr);
  std::string RegisterServer(const std::string& name, uint32_t capacity, uint64_t* id);
  std::vector<std::string> SosServers();
  // inherited_locals: SubmitThread.inherited_locals (0: none).
  std::string Submit(uint64_t program, uint64_t thread, bool daemon,
                     uint64_t inherited_locals = 0);
  std::string Watch(uint64_t program, uint64_t thread);
  std::string ThreadEnded(uint64_t program, uint64_t thread, bool by_exception,
                          const std::string& detail);
  std::string ProgramEnd(uint64_t program, const std::string& reason);
  // Requester: blocks for the launcher's answer; a djava_tm_fetch_result.
  // FOUND: *data holds the resource; otherwise *error says why.
  int FetchResource(uint64_t program, const std::string& name, int64_t timeout_ms,
                    std::string* data, std::string* error);
  // Launcher: the answer to a RESOURCE_REQUEST event. A resource larger than
  // DJAVA_TM_MAX_RESOURCE_BYTES is answered as an error, returned here too.
  std::string AnswerResource(uint64_t request, bool found, const void* data, size_t len,
                             const std::string& error);
  // Console output for the program's launcher (stream 1 or 2), in pieces of
  // at most kConsoleChunk bytes, in order.
  std::string Console(uint64_t program, uint64_t thread, int stream, const void* data,
                      size_t len);
  std::string ProgramExit(uint64_t program, int32_t status, const std::string& detail);
  std::string Unpark(uint64_t program, uint64_t thread, bool interrupt);
  // Thread.getState of a thread another node runs: that node's threadStatus
  // in *status (-1: unknown there). "" or why there is none (no answer
  // within timeout_ms, closed).
  // With `stack` not null, the thread's stack trace there is asked for too
  // and put in *stack (empty if it runs nowhere).
  std::string QueryThreadState(uint64_t program, uint64_t thread, int64_t timeout_ms,
                               int32_t* status, std::string* stack = nullptr);
  // The node running the thread answers a STATE_QUERY event (`stack`: if
  // the event's status asked for it).
  std::string AnswerThreadState(uint64_t request, uint64_t reply_to, int32_t status,
                                const std::string& stack = std::string());
  // Launcher: every server's statistics of `program`, formatted (see
  // djava_tm_gather_statistics), in *text; "" or why there are none.
  std::string GatherStatistics(uint64_t program, int64_t timeout_ms, std::string* text);
  // Server: the answer to a STATISTICS_REQUEST event.
  std::string AnswerStatistics(uint64_t request, const char* text, size_t len);
  static constexpr size_t kConsoleChunk = 1u << 20;

  // 1 event, 0 timeout, -1 disconnected and drained. The caller owns
  // ev->data (djava_tm_buffer_free).
  int NextEvent(djava_tm_event* ev, int64_t timeout_ms);
  int ThreadState(uint64_t program, uint64_t thread);
  int WaitThread(uint64_t program, uint64_t thread, int64_t timeout_ms);
  void PauseHeartbeats(bool paused);
  void Close();

 private:
  struct Fetch {
    bool done = false;
    bool found = false;
    std::string data;
    std::string error;
  };
  struct StateQuery {
    bool done = false;
    int32_t status = -1;
    std::string stack;
  };
  struct Gather {
    bool done = false;
    tmpb::StatisticsData answer;
  };
  std::string SendLocked(const tmpb::TmClientMessage& m);  // mu_ held
  std::string SendUnlocked(const tmpb::TmClientMessage& m);  // mu_ not held
  std::string SendRaw(const tmpb::TmClientMessage& m);       // send_mu_ held
  std::string Register(const tmpb::TmClientMessage& m);
  void ReaderLoop();
  void HeartbeatLoop();

  std::mutex mu_;
  std::mutex send_mu_;
  std::condition_variable cv_;
  std::unique_ptr<Channel> channel_;
  std::deque<djava_tm_event> events_;
  std::map<std::pair<uint64_t, uint64_t>, int> states_;
  std::map<uint64_t, std::string> failed_programs_;
  int registrations_ = 0;           // Registered answers received
  std::string last_reply_error_;    // most recent Error from the manager
  int errors_ = 0;
  std::vector<std::string> sos_servers_;
  uint32_t heartbeat_ms_ = 500;
  uint64_t server_id_ = 0;
  uint32_t processors_ = 0;  // Registered.processors of the last registration
  std::map<uint64_t, Fetch*> fetches_;          // outstanding FetchResource calls
  uint64_t last_fetch_ = 0;           // also numbers GatherStatistics calls
  std::map<uint64_t, Gather*> gathers_;         // outstanding GatherStatistics calls
  std::map<uint64_t, StateQuery*> state_queries_;  // outstanding QueryThreadState calls
  std::map<uint64_t, std::string> requests_;    // launcher: unanswered request -> name
  bool closed_ = false;
  std::string io_error_;
  bool heartbeat_paused_ = false;
  bool stop_ = false;
  std::thread reader_;
  std::thread heartbeat_;
};

}  // namespace tm
}  // namespace djava

#endif  // DJAVA_TM_CLIENT_TM_CLIENT_H_
