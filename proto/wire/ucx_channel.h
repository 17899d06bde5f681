// UCX under a Connection: frames over UCP's stream API, which picks shared
// memory between processes of one host and RDMA (verbs) between hosts.
//
// The handshake (handshake.h) runs on TCP as always. Each side makes a UCX
// worker for the connection and sends its worker address in the handshake,
// bound into its HMAC proof; each side opens an endpoint to the other only
// after the other proved the cluster secret. The TCP socket stays open: its
// end is how a channel learns that the peer went away.
//
// A reader spins on the worker for a short while after each message (a
// reply usually follows within microseconds), then arms the worker and
// sleeps on its event descriptor, so an idle connection costs no CPU.
#ifndef DJAVA_WIRE_UCX_CHANNEL_H_
#define DJAVA_WIRE_UCX_CHANNEL_H_

#include <cstdint>
#include <memory>
#include <string>

#include "wire/channel.h"

namespace djava {
namespace wire {

// Which channel a process's connections use. kAuto: UCX when both ends
// can, else TCP. kUcx: UCX or no connection. kTcp: TCP only.
enum class Transport { kAuto, kUcx, kTcp };

bool ParseTransport(const std::string& text, Transport* transport);
const char* TransportName(Transport transport);

// The process's choice: the last SetProcessTransport, else
// $DJAVA_TRANSPORT, else kDefaultTransport. False with *error when the
// environment variable holds something else than auto, ucx or tcp.
bool ProcessTransport(Transport* transport, std::string* error);
void SetProcessTransport(Transport transport);
constexpr Transport kDefaultTransport = Transport::kAuto;

// A connection's UCX worker before it has an endpoint.
class UcxWorker {
 public:
  // nullptr with *error when UCX cannot be used in this process.
  static std::unique_ptr<UcxWorker> Create(std::string* error);
  ~UcxWorker();
  UcxWorker(const UcxWorker&) = delete;
  UcxWorker& operator=(const UcxWorker&) = delete;

  // What the peer needs to reach this worker (opaque bytes).
  const std::string& address() const { return address_; }

  // The channel to the worker at peer_address, owning this worker;
  // bootstrap_fd is the connection's TCP socket (it stays the caller's).
  // nullptr with *error.
  static std::unique_ptr<Channel> Connect(std::unique_ptr<UcxWorker> worker,
                                          const std::string& peer_address, int bootstrap_fd,
                                          std::string* error);

 private:
  friend class UcxChannel;
  UcxWorker() = default;

  void* worker_ = nullptr;  // ucp_worker_h
  std::string address_;
};

// Where this process runs, for the peer to judge whether UCX can reach it:
// "BOOT_ID NETNS" (the kernel's boot id and the network namespace).
const std::string& UcxHostIdentity();
// Whether a process at `theirs` can be reached from one at `mine` over
// UCX. Not from another network namespace of the same host (a container,
// a test's stand-in host): UCX offers its shared memory there, but its
// wake-ups travel on abstract Unix sockets, which stay in their namespace,
// so a reader asleep on its worker would never learn of a message.
bool UcxCanReach(const std::string& mine, const std::string& theirs, std::string* why);

// Endpoints this process opened (for tests: a peer that failed the
// handshake must never get one).
uint64_t UcxEndpointsOpened();

}  // namespace wire
}  // namespace djava

#endif  // DJAVA_WIRE_UCX_CHANNEL_H_
