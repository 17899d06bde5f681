// The thread-manager daemon: three parts, each with one job.
//   ConnSender - the ordered way out to one client, written by its own thread
//                so that the service lock is never held across a blocking send
//   SosLink    - the manager's "monitor" connection to one sos shard, which
//                carries FreeProgram when a program is over
//   TmHost     - TmService on the wire connections of service "tm", with a
//                timer thread for liveness deadlines
// RunDaemon wires them to a ServiceHost and takes signals on one thread with
// sigwait (SIGTERM/SIGINT: clean exit 0; SIGUSR1: statistics), never in a
// handler.
#include "tm_daemon.h"

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "djava/tm_client.h"
#include "monitor.pb.h"
#include "tm_service.h"
#include "wire/connection.h"
#include "wire/daemon.h"
#include "wire/handshake.h"
#include "wire/secret.h"
#include "wire/service_host.h"

namespace djava {
namespace tm {

namespace {

const wire::ServiceHost::Log Log = wire::StderrLog("thread-manager");

TimeMs NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Messages that may wait for one client before it is given up on: far more
// than a client that still reads ever lets pile up, and room for several
// resource answers of the largest size at once.
constexpr size_t kMaxQueuedPerConn = 4 * size_t{wire::kDefaultMaxFrameSize};

// A resource answer of the largest size, with its other fields, fits in one
// frame of the clients' default maximum.
static_assert(DJAVA_TM_MAX_RESOURCE_BYTES + (64u << 10) <= wire::kDefaultMaxFrameSize,
              "resource answers must fit in a frame");

// The ordered, never-blocking way out to one client. Post() only queues (it
// runs under the service lock); the sender's thread does the blocking send.
// A client that stops reading is disconnected once kMaxQueuedPerConn bytes
// wait for it, which its connection thread then reports as a disconnect.
class ConnSender {
 public:
  explicit ConnSender(wire::Connection* conn) : conn_(conn) {
    thread_ = std::thread([this] { Loop(); });
  }
  ~ConnSender() {
    {
      std::lock_guard<std::mutex> l(mu_);
      closed_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }

  void Post(const TmServerMessage& msg) {
    std::lock_guard<std::mutex> l(mu_);
    if (closed_ || failed_) return;
    queued_bytes_ += msg.ByteSizeLong();
    if (queued_bytes_ > kMaxQueuedPerConn) {
      failed_ = true;
      queue_.clear();
      conn_->Shutdown();
      return;
    }
    queue_.push_back(msg);
    cv_.notify_one();
  }

 private:
  void Loop() {
    std::unique_lock<std::mutex> l(mu_);
    for (;;) {
      cv_.wait(l, [this] { return closed_ || !queue_.empty(); });
      if (queue_.empty()) return;  // closed and drained
      TmServerMessage msg = std::move(queue_.front());
      queue_.pop_front();
      queued_bytes_ -= msg.ByteSizeLong();
      l.unlock();
      // A failed send ends the connection; its Receive then fails too.
      if (!conn_->Send(msg)) conn_->Shutdown();
      l.lock();
    }
  }

  wire::Connection* const conn_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<TmServerMessage> queue_;
  size_t queued_bytes_ = 0;
  bool closed_ = false;
  bool failed_ = false;
  std::thread thread_;
};

// The manager's connection to one sos shard's monitor service. Free() only
// queues; the link's thread (re)connects as needed and sends. A program
// whose FreeProgram cannot be delivered (shard down) is retried until the
// shard is back or the daemon stops: leaked monitors are the only cost.
class SosLink {
 public:
  SosLink(std::string address, std::string secret)
      : address_(std::move(address)), secret_(std::move(secret)) {
    thread_ = std::thread([this] { Loop(); });
  }
  ~SosLink() {
    {
      std::lock_guard<std::mutex> l(mu_);
      stop_ = true;
      if (conn_) conn_->Shutdown();
    }
    cv_.notify_all();
    thread_.join();
    if (reader_.joinable()) reader_.join();
  }

  void Free(ProgramId program) {
    std::lock_guard<std::mutex> l(mu_);
    pending_.push_back(program);
    cv_.notify_one();
  }

  std::string Stats() const {
    std::lock_guard<std::mutex> l(mu_);
    return address_ + (conn_ && !broken_ ? " connected" : " not connected") + ", " +
           std::to_string(freed_) + " programs freed, " + std::to_string(pending_.size()) +
           " pending";
  }

 private:
  // Connects and authenticates; logs the first failure of a run of them.
  std::unique_ptr<wire::Connection> Dial() {
    std::string error;
    int fd = wire::ConnectTcp(address_, &error);
    std::unique_ptr<wire::Connection> c;
    if (fd >= 0) {
      c = std::make_unique<wire::Connection>(fd);
      if (!wire::ClientHandshake(c.get(), secret_, "monitor", &error)) c.reset();
    }
    if (c) {
      monitorpb::MonitorRequest hello;
      hello.mutable_hello()->set_node_name("thread-manager");
      if (!c->Send(hello)) c.reset();
    }
    if (!c && !warned_) {
      Log("cannot reach the monitor service of sos-server " + address_ + ": " + error +
          " (retrying)");
      warned_ = true;
    } else if (c && warned_) {
      Log("connected to the monitor service of sos-server " + address_);
      warned_ = false;
    }
    return c;
  }

  void Loop() {
    std::unique_lock<std::mutex> l(mu_);
    uint64_t seq = 0;
    while (!stop_) {
      if (!conn_ || broken_) {
        if (conn_) conn_->Shutdown();  // ends the reader, if a send failed first
        l.unlock();
        if (reader_.joinable()) reader_.join();
        auto c = Dial();
        l.lock();
        if (stop_) break;
        if (!c) {
          cv_.wait_for(l, std::chrono::seconds(1), [this] { return stop_; });
          continue;
        }
        conn_ = std::move(c);
        broken_ = false;
        // The service says nothing to the manager but ProtocolErrors; the
        // reader logs them and notices the connection's end.
        wire::Connection* conn = conn_.get();
        reader_ = std::thread([this, conn] { ReadLoop(conn); });
      }
      cv_.wait(l, [this] { return stop_ || broken_ || !pending_.empty(); });
      if (stop_ || broken_) continue;
      monitorpb::MonitorRequest req;
      req.set_seq(++seq);
      req.mutable_free_program()->set_program(pending_.front());
      wire::Connection* conn = conn_.get();
      l.unlock();
      bool sent = conn->Send(req);
      l.lock();
      if (sent) {
        pending_.pop_front();
        freed_++;
      } else {
        broken_ = true;
      }
    }
    if (conn_) conn_->Shutdown();
    l.unlock();
    if (reader_.joinable()) reader_.join();
  }

  void ReadLoop(wire::Connection* conn) {
    monitorpb::MonitorEvent ev;
    while (conn->Receive(&ev)) {
      if (ev.has_error()) Log("monitor service " + address_ + ": " + ev.error().message());
      ev.Clear();
    }
    std::lock_guard<std::mutex> l(mu_);
    if (!stop_) Log("lost the monitor service of sos-server " + address_ + ": " + conn->error());
    broken_ = true;
    cv_.notify_all();
  }

  const std::string address_;
  const std::string secret_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<ProgramId> pending_;
  std::unique_ptr<wire::Connection> conn_;
  bool broken_ = false;
  bool stop_ = false;
  bool warned_ = false;  // only touched by the link's thread
  uint64_t freed_ = 0;
  std::thread reader_;
  std::thread thread_;
};

// TmService on "tm" connections. Every call into the service is made under
// mu_: from each connection's thread as messages arrive, and from the timer
// thread at the next liveness deadline.
class TmHost : private TmService::Transport {
 public:
  TmHost(const DaemonConfig& cfg, std::vector<std::unique_ptr<SosLink>>* links)
      : service_(MakeOptions(cfg, links), this) {
    timer_ = std::thread([this] { TimerLoop(); });
  }
  ~TmHost() override {
    {
      std::lock_guard<std::mutex> l(mu_);
      stop_ = true;
    }
    timer_cv_.notify_all();
    timer_.join();
  }

  void Serve(std::unique_ptr<wire::Connection> conn, const std::string& peer) {
    ConnId id;
    auto client = std::make_shared<Client>(conn.get(), peer);
    {
      std::lock_guard<std::mutex> l(mu_);
      id = ++next_conn_;
      clients_[id] = client;
      connections_++;
      service_.OnConnect(id, peer);
      Log("connection " + std::to_string(id) + " (" + peer + ") over " + conn->transport());
    }
    TmClientMessage msg;
    while (conn->Receive(&msg)) {
      std::lock_guard<std::mutex> l(mu_);
      messages_++;
      service_.OnMessage(id, msg, NowMs());
      RearmTimerLocked();
      msg.Clear();
    }
    {
      std::lock_guard<std::mutex> l(mu_);
      // Out of the map first: nothing is sent to the client from here on.
      clients_.erase(id);
      service_.OnDisconnect(id, NowMs());
      RearmTimerLocked();
    }
    // The client's sender (joined by its destructor) goes before the
    // connection it writes to.
    client.reset();
  }

  std::string Stats() const {
    std::lock_guard<std::mutex> l(mu_);
    const ThreadRegistry& r = service_.registry();
    return std::to_string(clients_.size()) + " connections (" + std::to_string(connections_) +
           " in all, " + std::to_string(closed_by_service_) + " closed by the manager), " +
           std::to_string(messages_) + " messages in, " + std::to_string(sent_) +
           " out, " + std::to_string(r.QueueLength()) + " threads queued, " +
           std::to_string(r.PendingFetches()) + " resource requests outstanding, " +
           std::to_string(programs_freed_) + " programs freed";
  }

 private:
  struct Client {
    Client(wire::Connection* c, std::string p) : conn(c), peer(std::move(p)), sender(c) {}
    wire::Connection* conn;  // owned by Serve, which outlives the Client
    const std::string peer;
    ConnSender sender;
  };

  TmService::Options MakeOptions(const DaemonConfig& cfg,
                                 std::vector<std::unique_ptr<SosLink>>* links) {
    TmService::Options o;
    o.registry.liveness_timeout_ms = cfg.liveness_ms;
    o.registry.max_resource_bytes = DJAVA_TM_MAX_RESOURCE_BYTES;
    o.sos_servers = cfg.sos_servers;
    o.heartbeat_interval_ms = static_cast<uint32_t>(cfg.heartbeat_ms);
    o.log = Log;
    // Under mu_: only queues, on every shard's link.
    o.free_program = [this, links](ProgramId p) {
      programs_freed_++;
      for (auto& link : *links) link->Free(p);
    };
    return o;
  }

  // TmService::Transport; called under mu_.
  void Send(ConnId id, const TmServerMessage& msg) override {
    auto it = clients_.find(id);
    if (it == clients_.end()) return;
    it->second->sender.Post(msg);
    sent_++;
  }
  void Close(ConnId id, const std::string& why) override {
    auto it = clients_.find(id);
    if (it == clients_.end()) return;
    Log("closing connection " + std::to_string(id) + " (" + it->second->peer + "): " + why);
    closed_by_service_++;
    it->second->conn->Shutdown();  // its thread then runs the disconnect
  }

  void RearmTimerLocked() {
    TimeMs next = service_.NextDeadline();
    if (next >= 0 && (armed_ < 0 || next < armed_)) timer_cv_.notify_one();
  }

  void TimerLoop() {
    std::unique_lock<std::mutex> l(mu_);
    while (!stop_) {
      armed_ = service_.NextDeadline();
      if (armed_ < 0) {
        timer_cv_.wait(l);
      } else {
        timer_cv_.wait_until(l, std::chrono::steady_clock::time_point(
                                    std::chrono::milliseconds(armed_ + 1)));
      }
      if (stop_) break;
      service_.OnTick(NowMs());  // acts only on deadlines that have passed
    }
  }

  mutable std::mutex mu_;
  TmService service_;
  std::map<ConnId, std::shared_ptr<Client>> clients_;
  ConnId next_conn_ = 0;
  bool stop_ = false;
  TimeMs armed_ = -1;
  std::condition_variable timer_cv_;
  std::thread timer_;
  uint64_t connections_ = 0;
  uint64_t messages_ = 0;
  uint64_t sent_ = 0;
  uint64_t closed_by_service_ = 0;
  uint64_t programs_freed_ = 0;
};

}  // namespace

int RunDaemon(const DaemonConfig& cfg) {
  std::string secret, error;
  if (!wire::LoadSecret(cfg.secret_file, &secret, &error)) {
    std::fprintf(stderr, "thread-manager: %s\n", error.c_str());
    return 1;
  }

  // Before any thread starts: they inherit the blocked signals.
  wire::DaemonSignals signals;

  std::vector<std::unique_ptr<SosLink>> links;
  for (const auto& address : cfg.sos_servers)
    links.push_back(std::make_unique<SosLink>(address, secret));
  TmHost tm(cfg, &links);
  wire::ServiceHost host(secret, Log);
  host.AddService("tm", [&tm](std::unique_ptr<wire::Connection> c, const std::string& peer) {
    tm.Serve(std::move(c), peer);
  });
  if (!host.Listen(cfg.listen, &error)) {
    std::fprintf(stderr, "thread-manager: cannot listen on %s: %s\n", cfg.listen.c_str(),
                 error.c_str());
    return 1;
  }
  auto stats = [&] {
    Log("statistics: " + tm.Stats());
    for (const auto& link : links) Log("sos link " + link->Stats());
  };

  const std::string where = cfg.listen.substr(0, cfg.listen.rfind(':'));
  Log("listening on " + where + ":" + std::to_string(host.port()) + ", " +
      std::to_string(links.size()) + " sos shard(s)");
  return signals.Run(&host, stats, Log);
}

}  // namespace tm
}  // namespace djava
