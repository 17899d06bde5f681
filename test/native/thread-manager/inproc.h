// In-process plumbing for tests: a pair of connected Channels over memory,
// and a host that serves a real MonitorService on such channels (the role
// sos-server plays over TCP). Joins the real client to the real service
// without sockets; the process tests (test/py/tm) do the same over TCP.
#ifndef DJAVA_TEST_INPROC_H_
#define DJAVA_TEST_INPROC_H_

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>

#include "djava/channel.h"
#include "monitor_service.h"
#include "tm_service.h"

namespace djava {
namespace test {

struct Pipe {
  std::mutex mu;
  std::condition_variable cv;
  std::deque<std::string> q;
  bool closed = false;
};

class PipeChannel : public Channel {
 public:
  PipeChannel(std::shared_ptr<Pipe> in, std::shared_ptr<Pipe> out) : in_(in), out_(out) {}
  ~PipeChannel() override { Shutdown(); }
  bool Send(const google::protobuf::MessageLite& m) override {
    std::lock_guard<std::mutex> l(out_->mu);
    if (out_->closed) return false;
    out_->q.push_back(m.SerializeAsString());
    out_->cv.notify_all();
    return true;
  }
  bool Receive(google::protobuf::MessageLite* m) override {
    std::unique_lock<std::mutex> l(in_->mu);
    in_->cv.wait(l, [&] { return !in_->q.empty() || in_->closed; });
    if (in_->q.empty()) return false;
    std::string s = std::move(in_->q.front());
    in_->q.pop_front();
    return m->ParseFromString(s);
  }
  void Shutdown() override {
    for (auto& p : {in_, out_}) {
      std::lock_guard<std::mutex> l(p->mu);
      p->closed = true;
      p->cv.notify_all();
    }
  }
  std::string Error() const override { return "pipe closed"; }

 private:
  std::shared_ptr<Pipe> in_, out_;
};

inline std::pair<std::unique_ptr<Channel>, std::unique_ptr<Channel>> MakePipe() {
  auto a = std::make_shared<Pipe>(), b = std::make_shared<Pipe>();
  return {std::make_unique<PipeChannel>(a, b), std::make_unique<PipeChannel>(b, a)};
}

inline monitor::TimeNs NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

class InProcMonitorHost : public monitor::MonitorService::Transport {
 public:
  explicit InProcMonitorHost(monitor::MonitorTable::Options o = {})
      : service_(o, this, [](const std::string&) {}) {
    ticker_ = std::thread([this] {
      while (!stop_) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
        std::lock_guard<std::mutex> l(mu_);
        service_.OnTick(NowNs());
      }
    });
  }
  ~InProcMonitorHost() override {
    stop_ = true;
    ticker_.join();
    {
      std::lock_guard<std::mutex> l(mu_);
      for (auto& c : conns_) c.second->Shutdown();
    }
    for (auto& t : readers_) t.join();
  }
  // Returns the client's end of a new connection.
  std::unique_ptr<Channel> Connect() {
    auto pipe = MakePipe();
    std::lock_guard<std::mutex> l(mu_);
    monitor::NodeId node = ++next_node_;
    Channel* server_end = pipe.second.release();
    conns_[node].reset(server_end);
    service_.OnConnect(node, "inproc-" + std::to_string(node));
    readers_.emplace_back([this, node, server_end] {
      monitorpb::MonitorRequest req;
      while (server_end->Receive(&req)) {
        std::lock_guard<std::mutex> l(mu_);
        requests_++;
        service_.OnMessage(node, req, NowNs());
        req.Clear();
      }
      std::lock_guard<std::mutex> l(mu_);
      service_.OnDisconnect(node, NowNs());
    });
    return std::move(pipe.first);
  }
  void Send(monitor::NodeId node, const monitorpb::MonitorEvent& ev) override {
    auto it = conns_.find(node);
    if (it != conns_.end()) it->second->Send(ev);
  }
  std::function<void()> SendLater(monitor::NodeId node,
                                  const monitorpb::MonitorEvent& ev) override {
    return [this, node, ev] {
      std::lock_guard<std::mutex> l(mu_);
      Send(node, ev);
    };
  }
  void Close(monitor::NodeId node, const std::string&) override {
    auto it = conns_.find(node);
    if (it != conns_.end()) it->second->Shutdown();
  }
  size_t MonitorCount() {
    std::lock_guard<std::mutex> l(mu_);
    return service_.table().MonitorCount();
  }
  // Requests received from all nodes so far (a node's message count).
  size_t Requests() {
    std::lock_guard<std::mutex> l(mu_);
    return requests_;
  }
  // f(table) under the service's lock, e.g. to look at a monitor's state.
  template <typename F>
  auto WithTable(F f) {
    std::lock_guard<std::mutex> l(mu_);
    return f(service_.table());
  }

 private:
  std::mutex mu_;
  monitor::MonitorService service_;
  std::map<monitor::NodeId, std::unique_ptr<Channel>> conns_;
  std::vector<std::thread> readers_;
  std::thread ticker_;
  std::atomic<bool> stop_{false};
  monitor::NodeId next_node_ = 0;
  size_t requests_ = 0;
};


inline tm::TimeMs NowMs() { return NowNs() / 1000000; }

// Serves a real TmService on memory channels, with a timer for liveness.
class InProcTmHost : public tm::TmService::Transport {
 public:
  explicit InProcTmHost(tm::TmService::Options o) : service_(Quiet(std::move(o)), this) {
    ticker_ = std::thread([this] {
      while (!stop_) {
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
        std::lock_guard<std::mutex> l(mu_);
        service_.OnTick(NowMs());
      }
    });
  }
  ~InProcTmHost() override {
    stop_ = true;
    ticker_.join();
    {
      std::lock_guard<std::mutex> l(mu_);
      for (auto& c : conns_) c.second->Shutdown();
    }
    for (auto& t : readers_) t.join();
  }
  std::unique_ptr<Channel> Connect() {
    auto pipe = MakePipe();
    std::lock_guard<std::mutex> l(mu_);
    tm::ConnId id = ++next_;
    Channel* end = pipe.second.release();
    conns_[id].reset(end);
    service_.OnConnect(id, "inproc-" + std::to_string(id));
    readers_.emplace_back([this, id, end] {
      tmpb::TmClientMessage m;
      while (end->Receive(&m)) {
        std::lock_guard<std::mutex> l(mu_);
        service_.OnMessage(id, m, NowMs());
        m.Clear();
      }
      std::lock_guard<std::mutex> l(mu_);
      service_.OnDisconnect(id, NowMs());
    });
    return std::move(pipe.first);
  }
  void Send(tm::ConnId c, const tmpb::TmServerMessage& m) override {
    auto it = conns_.find(c);
    if (it != conns_.end()) it->second->Send(m);
  }
  void Close(tm::ConnId c, const std::string&) override {
    auto it = conns_.find(c);
    if (it != conns_.end()) it->second->Shutdown();
  }
  std::vector<tm::ProgramId> freed() {
    std::lock_guard<std::mutex> l(mu_);
    return freed_;
  }

 private:
  tm::TmService::Options Quiet(tm::TmService::Options o) {
    o.log = [](const std::string&) {};
    o.free_program = [this](tm::ProgramId p) { freed_.push_back(p); };
    return o;
  }
  std::mutex mu_;
  std::vector<tm::ProgramId> freed_;
  tm::TmService service_;
  std::map<tm::ConnId, std::unique_ptr<Channel>> conns_;
  std::vector<std::thread> readers_;
  std::thread ticker_;
  std::atomic<bool> stop_{false};
  tm::ConnId next_ = 0;
};

}  // namespace test
}  // namespace djava

#endif  // DJAVA_TEST_INPROC_H_
