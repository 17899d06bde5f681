#include "monitor_host.h"

#include <atomic>
#include <chrono>

#include "outbox.h"
#include "wire/frame.h"

namespace djava {
namespace monitor {

namespace {

// Bytes that may wait for one node before it is given up on. Monitor events
// are tens of bytes: this is far beyond any node that still reads.
constexpr size_t kMaxQueuedPerNode = 64u << 20;

TimeNs NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

struct MonitorHost::Node {
  Node(wire::Connection* c, std::string p, std::function<void(const std::string&)> on_failure)
      : conn(c),
        peer(std::move(p)),
        outbox(c->channel(), kMaxQueuedPerNode, std::move(on_failure)) {}
  wire::Connection* conn;  // owned by Serve, which outlives the node's map entry
  const std::string peer;
  sos::Outbox outbox;
};

MonitorHost::MonitorHost(wire::ServiceHost::Log log, MonitorTable::Options options,
                         ProgramEnded program_ended)
    : log_(std::move(log)),
      program_ended_(std::move(program_ended)),
      service_(options, this, [this](const std::string& line) { Say(line); }) {
  timer_ = std::thread([this] { TimerLoop(); });
}

MonitorHost::~MonitorHost() {
  {
    std::lock_guard<std::mutex> l(mu_);
    stop_ = true;
  }
  timer_cv_.notify_all();
  timer_.join();
}

bool MonitorHost::TraceTo(const std::string& path, std::string* error) {
  return trace_.Open(path, error);
}

void MonitorHost::Say(const std::string& line) const {
  if (log_) log_("monitor: " + line);
}

void MonitorHost::Register(wire::ServiceHost* host) {
  host->AddService("monitor", [this](std::unique_ptr<wire::Connection> conn,
                                     const std::string& peer) { Serve(std::move(conn), peer); });
}

void MonitorHost::Serve(std::unique_ptr<wire::Connection> conn, const std::string& peer) {
  NodeId id;
  std::shared_ptr<Node> node;
  {
    std::lock_guard<std::mutex> l(mu_);
    id = ++next_node_;
    node = std::make_shared<Node>(conn.get(), peer, [this, id](const std::string& why) {
      Say("node " + std::to_string(id) + ": " + why + "; disconnecting it");
    });
    nodes_[id] = node;
    connections_++;
    service_.OnConnect(id, peer);
  }
  monitorpb::MonitorRequest req;
  while (conn->Receive(&req)) {
    {
      std::lock_guard<std::mutex> l(mu_);
      requests_++;
      trace_.Line(id, "<-", req);
      service_.OnMessage(id, req, NowNs());
      RearmTimerLocked();
    }
    if (req.has_free_program() && program_ended_) program_ended_(req.free_program().program());
    req.Clear();
  }
  {
    std::lock_guard<std::mutex> l(mu_);
    // Out of the map first: nothing is posted to the node from here on.
    nodes_.erase(id);
    service_.OnDisconnect(id, NowNs());
    RearmTimerLocked();
  }
  node->outbox.Close();  // joins its writer; the connection closes after
}

void MonitorHost::Send(NodeId id, const monitorpb::MonitorEvent& ev) {
  auto it = nodes_.find(id);
  if (it == nodes_.end()) return;
  trace_.Line(id, "->", ev);
  std::string frame;
  wire::AppendFrame(ev.SerializeAsString(), &frame);
  it->second->outbox.Post(frame);
  events_++;
}

std::function<void()> MonitorHost::SendLater(NodeId id, const monitorpb::MonitorEvent& ev) {
  auto it = nodes_.find(id);
  if (it == nodes_.end()) return [] {};
  auto frame = std::make_shared<std::string>();
  wire::AppendFrame(ev.SerializeAsString(), frame.get());
  // The node's outbox orders and sends on its own; once the node is gone it
  // is closed and ignores the post.
  std::shared_ptr<Node> node = it->second;
  auto sent = std::make_shared<std::atomic<bool>>(false);
  // A copy of the event only for the trace: a grant that waits for its data
  // is the common case of a lock handed between nodes. The host outlives
  // every post: its connections and timer end first.
  std::shared_ptr<const monitorpb::MonitorEvent> traced;
  if (trace_.on()) traced = std::make_shared<const monitorpb::MonitorEvent>(ev);
  std::function<void()> post = [this, id, traced, node, frame, sent] {
    if (sent->exchange(true)) return;
    if (traced != nullptr) trace_.Line(id, "=>", *traced);
    node->outbox.Post(*frame);
  };
  // Sent by the timer if the data has not left by then (its flush put off:
  // the releasing node cannot produce the bytes yet, perhaps until a thread
  // of its own gets what this grant would give): the grant never waits on
  // the data for longer, and the new owner then waits for the data as
  // without the move. Either post is the only one.
  late_.push_back(LateGrant{NowNs() + kDataWaitLimitNs, sent, post});
  if (armed_ == kNoDeadline || late_.back().due < armed_) timer_cv_.notify_one();
  return post;
}

void MonitorHost::Close(NodeId id, const std::string& why) {
  auto it = nodes_.find(id);
  if (it == nodes_.end()) return;
  Say("closing node " + std::to_string(id) + " (" + it->second->peer + "): " + why);
  closed_by_service_++;
  // Ends the node's Receive; its thread then runs the disconnect.
  it->second->conn->Shutdown();
}

void MonitorHost::RearmTimerLocked() {
  TimeNs next = service_.NextDeadline();
  if (next != kNoDeadline && (armed_ == kNoDeadline || next < armed_)) timer_cv_.notify_one();
}

TimeNs MonitorHost::NextLateGrantLocked() {
  TimeNs next = kNoDeadline;
  for (auto it = late_.begin(); it != late_.end();) {
    if (it->sent->load()) {
      it = late_.erase(it);  // its data left in time
      continue;
    }
    if (next == kNoDeadline || it->due < next) next = it->due;
    ++it;
  }
  return next;
}

void MonitorHost::SendLateGrantsLocked(TimeNs now) {
  for (LateGrant& g : late_) {
    if (g.due > now || g.sent->load()) continue;
    g.post();
    grants_not_waiting_++;
  }
}

void MonitorHost::TimerLoop() {
  std::unique_lock<std::mutex> l(mu_);
  while (!stop_) {
    armed_ = service_.NextDeadline();
    const TimeNs late = NextLateGrantLocked();
    if (late != kNoDeadline && (armed_ == kNoDeadline || late < armed_)) armed_ = late;
    if (armed_ == kNoDeadline) {
      timer_cv_.wait(l);
    } else {
      timer_cv_.wait_until(l, std::chrono::steady_clock::time_point(
                                  std::chrono::nanoseconds(armed_)));
    }
    if (stop_) break;
    // Early or spurious wake-ups are harmless: OnTick acts only on deadlines
    // that have passed.
    ticks_++;
    service_.OnTick(NowNs());
    SendLateGrantsLocked(NowNs());
  }
}

std::string MonitorHost::Stats() const {
  std::lock_guard<std::mutex> l(mu_);
  return "monitor nodes " + std::to_string(nodes_.size()) + " connected (" +
         std::to_string(connections_) + " in all, " + std::to_string(closed_by_service_) +
         " closed by the service), " + std::to_string(requests_) + " requests, " +
         std::to_string(events_) + " events, " + std::to_string(ticks_) + " timer ticks, " +
         std::to_string(service_.table().MonitorCount()) + " monitors, " +
         std::to_string(service_.moved_grants()) + " grants sent after their object's data "
         "(not among the events; " + std::to_string(grants_not_waiting_) +
         " of them sent before it, after waiting " + std::to_string(kDataWaitLimitNs / 1000000) +
         " ms)";
}

}  // namespace monitor
}  // namespace djava
