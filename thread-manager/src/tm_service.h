// TmService: the thread manager's protocol handling, between decoded
// tm.proto messages and the ThreadRegistry. Transport-agnostic: the daemon
// supplies a Transport (the wire library's connections) and calls the On*
// methods; tests can drive it directly. Not thread-safe: the daemon calls it
// from one thread (or under one lock).
#ifndef DJAVA_TM_TM_SERVICE_H_
#define DJAVA_TM_TM_SERVICE_H_

#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "registry.h"
#include "tm.pb.h"

namespace djava {
namespace tm {

using tmpb::TmClientMessage;
using tmpb::TmServerMessage;

class TmService {
 public:
  class Transport {
   public:
    virtual ~Transport() = default;
    virtual void Send(ConnId conn, const TmServerMessage& msg) = 0;
    // Closes only this connection, logging `why`.
    virtual void Close(ConnId conn, const std::string& why) = 0;
  };
  struct Options {
    ThreadRegistry::Options registry;
    std::vector<std::string> sos_servers;   // told to every client
    uint32_t heartbeat_interval_ms = 500;
    // Called when a program is over: free its chunks and monitors.
    std::function<void(ProgramId)> free_program;
    std::function<void(const std::string&)> log;
  };

  TmService(Options options, Transport* transport);

  void OnConnect(ConnId conn, const std::string& peer);
  void OnMessage(ConnId conn, const TmClientMessage& msg, TimeMs now);
  void OnDisconnect(ConnId conn, TimeMs now);
  void OnTick(TimeMs now);
  TimeMs NextDeadline() const { return registry_.NextDeadline(); }
  const ThreadRegistry& registry() const { return registry_; }

 private:
  struct Conn {
    std::string peer;
    bool is_server = false;  // registered as a thread server (ServerId == ConnId)
    // Programs this connection's dropped relays (console output, unparks)
    // were logged for: one line per program, not one per message.
    std::set<ProgramId> relay_drop_logged;
  };
  void Apply(std::vector<Action>* actions);
  void Reply(ConnId conn, const std::string& error);
  void Log(const std::string& line);

  Options options_;
  Transport* transport_;
  ThreadRegistry registry_;
  std::map<ConnId, Conn> conns_;
};

}  // namespace tm
}  // namespace djava

#endif  // DJAVA_TM_TM_SERVICE_H_
