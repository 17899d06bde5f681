// TmClient: a node's connection to the thread manager. One reader thread
// turns the manager's messages into events (a queue for the caller, plus a
// table of known thread states for join/isAlive); a server's client also
// runs a heartbeat thread. The C ABI (include/djava/tm_client.h) wraps it.
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
  std::string RegisterProgram(uint64_t program, const std::string& node, const std::string& cp);
  std::string RegisterServer(const std::string& name, uint32_t capacity, uint64_t* id);
  std::vector<std::string> SosServers();
  std::string Submit(uint64_t program, uint64_t thread, bool daemon);
  std::string Watch(uint64_t program, uint64_t thread);
  std::string ThreadEnded(uint64_t program, uint64_t thread, bool by_exception,
                          const std::string& detail);
  std::string ProgramEnd(uint64_t program, const std::string& reason);
  // 1 event, 0 timeout, -1 disconnected and drained.
  int NextEvent(djava_tm_event* ev, int64_t timeout_ms);
  int ThreadState(uint64_t program, uint64_t thread);
  int WaitThread(uint64_t program, uint64_t thread, int64_t timeout_ms);
  void PauseHeartbeats(bool paused);
  void Close();

 private:
  std::string SendLocked(const tmpb::TmClientMessage& m);
  std::string Register(const tmpb::TmClientMessage& m);
  void ReaderLoop();
  void HeartbeatLoop();

  std::mutex mu_;
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
