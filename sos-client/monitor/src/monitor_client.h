// MonitorClient: a node's connection to the monitor service, shared by all
// its Java threads. LocalMonitors decides what needs a message; this class
// sends it, blocks the calling thread until the service answers, and applies
// the service's events (grants, recalls, failures) from one reader thread per
// shard. The C ABI (include/djava/monitor_client.h) wraps it.
#ifndef DJAVA_MONITOR_MONITOR_CLIENT_H_
#define DJAVA_MONITOR_MONITOR_CLIENT_H_

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "djava/channel.h"
#include "djava/monitor_client.h"
#include "sos/ids.h"
#include "local_monitors.h"
#include "monitor.pb.h"
#include "wire/traffic.h"

namespace djava {
namespace monitor {

// A waiter in a wait set with a key other than 0 (MonitorClient::Queue).
struct KeyedWaiter {
  uint64_t key = 0;
  uint64_t java_thread = 0;
  LocalThread thread;
};

// A monitor's owner and queues (MonitorClient::State).
struct MonitorState {
  bool owned = false;              // by a thread, or by a node's lease
  uint64_t owner_java_thread = 0;  // 0: unknown (another node's lease) or none
  // The threads queued to enter, first to be served first; key is
  // DJAVA_MON_ENTERING_KEY.
  std::vector<KeyedWaiter> entering;
  std::vector<KeyedWaiter> waiters;  // keyed waiters, as Queue lists them
};

class MonitorClient {
 public:
  // One channel per sos-server shard, in shard order.
  // `node_name` (e.g. host:pid) names this node in other nodes' errors.
  explicit MonitorClient(std::vector<std::unique_ptr<Channel>> shards,
                         const std::string& node_name = "", uint64_t sos_node = 0);
  ~MonitorClient();
  // How errors name the shards' servers (their addresses, in shard order);
  // before any connection can break.
  void SetShardAddresses(std::vector<std::string> addresses) {
    shard_addresses_ = std::move(addresses);
  }

  // Each returns a djava_monitor_status; on non-OK the calling thread's
  // LastError() says why.
  int Enter(uint64_t obj, LocalThread t) { return EnterPolled(obj, t, 0, 0, -1); }
  // A Java monitor's enter (synchronized), which promises no order: the
  // service may grant it together with this node's other such requests
  // (monitor.proto, Enter.grouped), and the monitor then passes among them
  // here without a message between them.
  int EnterGrouped(uint64_t obj, LocalThread t) { return EnterPolled(obj, t, 0, 0, -1, true); }
  // monitorenter naming the thread's Thread object `java_thread` (reported
  // by State). timeout_ms > 0: after that long still queued, the enter is
  // given up as by Cancel and DJAVA_MON_TIMED_OUT returned (nothing held);
  // 0: no timeout. poll_ms >= 0: returns DJAVA_MON_WAITING after poll_ms
  // while still queued; continue with EnterMore (the deadline still
  // applies) or end it with Cancel. poll_ms < 0: blocks until the end.
  // barging: the lock lets a thread take it ahead of queued ones (a
  // non-fair ReentrantLock), so the thread's release may be kept back a
  // moment as a grouped monitor's is (Linger below); the service still
  // queues the enter in order.
  int EnterPolled(uint64_t obj, LocalThread t, uint64_t java_thread, int64_t timeout_ms,
                  int64_t poll_ms, bool grouped = false, bool barging = false);
  int EnterMore(LocalThread t, int64_t poll_ms);
  // An enter that never queues: DJAVA_MON_OK (held now) or DJAVA_MON_BUSY
  // (nothing held, nothing queued). Decided locally when the node can
  // (re-entry, a local owner, its lease), else one round trip.
  int TryEnter(uint64_t obj, LocalThread t, uint64_t java_thread);
  int Exit(uint64_t obj, LocalThread t);
  // Data leaves with the release (monitor.proto, Wanted): where the node's
  // exclusive chunks stand (djava_sos_exclusive_mark), asked as each enter
  // or wait is sent; unset, no release hands data over.
  void SetMarkSource(std::function<uint64_t()> mark);
  // What a release kept back hands over when it goes (the JVM's
  // djava_sos_hand_over): the ids written home for it, given the monitor,
  // the tenure's mark and the program. Set, a thread that tends to enter a
  // monitor again right after its exit keeps it a moment (Linger below).
  using HandOverFn =
      std::function<std::vector<uint64_t>(uint64_t obj, uint64_t since, uint64_t program)>;
  void SetHandOver(HandOverFn f);
  // How long a release is kept back, and how soon after its release a
  // thread's enter counts as at once (50 µs; tests take longer).
  void SetLingerFor(std::chrono::microseconds d) {
    std::lock_guard<std::mutex> lock(mu_);
    linger_for_ = d;
  }
  // LocalMonitors::ReleaseWanted and NoteReleased, for the JVM's exit and
  // wait: whether the release will leave for a node that wants the
  // monitor, and what it wrote home for it.
  bool ReleaseWanted(uint64_t obj, LocalThread t, bool whole, uint64_t* since);
  void NoteReleased(uint64_t obj, LocalThread t, const std::vector<uint64_t>& ids);
  // Object.wait. poll_ms < 0: blocks until the wait ends. Otherwise returns
  // DJAVA_MON_WAITING after poll_ms if the thread is still in the wait set;
  // it stays there until WaitMore or Cancel (the JVM polls its own state
  // between the two without leaving the wait set, so no notify is lost).
  int Wait(uint64_t obj, LocalThread t, int64_t timeout_ms, int64_t poll_ms = -1) {
    return WaitKeyed(obj, t, 0, 0, timeout_ms, poll_ms);
  }
  // The same in the wait set `key` (0: Object.wait's), reporting the
  // waiter's Thread object `java_thread` to Queue, at `place` in the line
  // of acquirers (monitor.proto, Wait; 0: not in line). A timed wait in
  // line ends at its deadline without the monitor, if it has not got it
  // back by then: DJAVA_MON_CANCELLED.
  int WaitKeyed(uint64_t obj, LocalThread t, uint64_t key, uint64_t java_thread,
                int64_t timeout_ms, int64_t poll_ms = -1, uint64_t place = 0);
  int WaitMore(LocalThread t, int64_t poll_ms);
  int Notify(uint64_t obj, LocalThread t, bool all) { return NotifyKeyed(obj, t, 0, all); }
  int NotifyKeyed(uint64_t obj, LocalThread t, uint64_t key, bool all);
  // Notify (key, all) in the monitor's next free turn; `t` need not own it.
  // Never blocks: at most one message, none under an idle lease.
  int Signal(uint64_t obj, LocalThread t, uint64_t key, bool all, uint64_t to_key = 0);
  // The monitor's keyed waiters, longest waiting first, into *waiters. A
  // round trip to the service unless this node holds the lease.
  int Queue(uint64_t obj, LocalThread t, std::vector<KeyedWaiter>* waiters);
  // The monitor's owner, the threads queued to enter it and its keyed
  // waiters. Local (no message) when the node holds the lease, it is not
  // recalled and no thread here has an enter in flight; else a round trip.
  int State(uint64_t obj, LocalThread t, MonitorState* state);
  // CyclicBarrier.await at a shared barrier (the service's BarrierTable):
  // DJAVA_MON_OK once it tripped, DJAVA_MON_BARRIER_LAST (this arrival
  // runs the barrier's action, then sends BarrierOp TRIP or BREAK),
  // DJAVA_MON_BROKEN, DJAVA_MON_TIMED_OUT or DJAVA_MON_INTERRUPTED (the
  // barrier is broken now); LastBarrier() then has the arrival's index.
  // poll_ms as for WaitKeyed (continue with WaitMore, or Cancel, which
  // breaks the barrier).
  int Arrive(uint64_t obj, LocalThread t, uint32_t parties, bool command, bool timed,
             uint64_t timeout_ns, bool interrupted, uint64_t java_thread, int64_t poll_ms);
  // A barrier op (monitor.proto, BarrierOpKind); one round trip, and
  // longer while another thread's barrier action runs. LastBarrier() then
  // has the barrier's state after it.
  int BarrierOp(uint64_t obj, LocalThread t, int op);
  int Interrupt(LocalThread target);
  // Something the thread of key `thread` (any program) looks at between
  // polls changed (the JVM: its interrupt status): its polled enter, wait
  // or arrive returns DJAVA_MON_WAITING now, or at its next poll if it is
  // between two, still queued. Never blocks; nothing if it is not polling.
  void Poke(uint64_t thread);
  int Cancel(LocalThread t);
  int FreeProgram(uint64_t program);
  int Ping();
  // What this client sent to the service and received from it, by kind
  // (monitor.proto's oneof field names, with counts): "sent enter 12, exit
  // 9; received granted 12". For -XX:+PrintDistributedStatistics.
  std::string TrafficByKind();
  int Count(uint64_t obj, LocalThread t);
  // Leaves cleanly when it can (no thread owns, awaits or waits on a
  // monitor: leases are returned, Leave is sent and confirmed), so that
  // other nodes' programs go on; otherwise just disconnects, which the
  // service takes as this node's death. Then closes the connections.
  void Close();

  static const std::string& LastError();
  // The place in line the calling thread's last wait (WaitKeyed, WaitMore)
  // ended with: place 0 if it was not in line or did not end with a grant.
  struct LinePlace {
    uint64_t place = 0;
    bool first = false;
  };
  static LinePlace LastPlace();
  // What the calling thread's last Arrive or BarrierOp ended with.
  struct BarrierResult {
    uint32_t index = 0;    // Arrive: the arrival's index
    bool broken = false;   // BarrierOp: the barrier's state after it
    uint32_t waiting = 0;
  };
  static BarrierResult LastBarrier();

 private:
  struct Pending {
    uint64_t obj = 0;
    bool done = false;
    int status = DJAVA_MON_OK;
    std::string error;
    std::condition_variable cv;
    bool enter = false;               // an Enter (else a Wait, an Arrive or a Query)
    bool barrier = false;             // an Arrive or a BarrierOp
    bool try_only = false;            // an Enter that Busy may end
    uint64_t java_thread = 0;         // an Enter's or Wait's, for the grant
    // An Enter's or Wait's: where the node's exclusive chunks stood when it
    // was sent (SetMarkSource). Data pushed here with the grant arrives
    // before it, and belongs to the tenure the grant begins.
    uint64_t mark = 0;
    bool has_deadline = false;        // an Enter's own timeout, or a timed wait in line's
    std::chrono::steady_clock::time_point deadline;
    LocalThread thread;               // a Query's
    std::vector<KeyedWaiter> queue;   // a Query's answer: keyed waiters,
    std::vector<KeyedWaiter> entering;  // the threads queued to enter,
    bool owned = false, leased = false;  // and the owner
    uint64_t owner_java_thread = 0;
    LinePlace woken_place;            // a Wait's, from its grant
    BarrierResult barrier_result;     // an Arrive's or BarrierOp's
    bool poked = false;               // Poke: the thread's next poll ends at once
  };
  // The home shard of an object: the sos directory's own partition, so an
  // object's monitor and its data live on the same server.
  size_t ShardOf(uint64_t obj) const { return sos::HomeShard(obj, shards_.size()); }
  int Check(LocalThread t);  // closed or program failed?
  bool SendLocked(size_t shard, monitorpb::MonitorRequest* req);
  // Waits until p is done (at most poll_ms if >= 0: DJAVA_MON_WAITING).
  // Only the blocked thread removes its entry from pending_, so that a
  // result that arrives between two polls is kept for it. An enter whose
  // deadline passes is given up (GiveUp) and ends DJAVA_MON_TIMED_OUT.
  int Block(std::unique_lock<std::mutex>* lock, LocalThread t, const std::shared_ptr<Pending>& p,
            int64_t poll_ms = -1);
  // Whether a grant or failure for (t, obj) has a blocked request to end.
  Pending* Awaiting(LocalThread t, uint64_t obj);
  bool AnyBlocked() const;
  // Ends the blocked enter or wait p of t with `status`, as Cancel: the
  // service is told (CancelEnter) and a grant already on its way is handed
  // back when it comes.
  void GiveUp(LocalThread t, Pending* p, int status, const std::string& error);
  // Sends a Query for obj and blocks until its Queue (or a failure): the
  // answer is in *answer.
  int QueryLocked(std::unique_lock<std::mutex>* lock, uint64_t obj, LocalThread t,
                  std::shared_ptr<Pending>* answer);
  void Finish(Pending* p, int status, const std::string& error);
  // The owner's release handed the monitor to successor s: its blocked
  // request ends as its grant would have.
  void HandedOn(uint64_t obj, const LocalMonitors::Successor& s);
  // Ends the queries of a failed program.
  void FailQueries(uint64_t program, const std::string& error);
  void ReaderLoop(size_t shard);
  void OnEvent(size_t shard, const monitorpb::MonitorEvent& ev);
  // Close's clean part: true when every shard confirmed the Leave.
  bool LeaveLocked(std::unique_lock<std::mutex>* lock);

  // Lingering (docs/THREAD-MANAGER.md, "A release kept back a moment"): a
  // thread that exits a Java monitor and enters it again at once (a woken
  // waiter's re-check, then its next turn; a notifier's next turn) would
  // hand the monitor to the service and queue behind everyone for it. Seen
  // doing so, its last exit keeps the monitor for it for linger_for_; its
  // enter within that takes it with no message, else the release goes then.
  std::chrono::microseconds linger_for_{50};
  struct LingerHistory {
    std::chrono::steady_clock::time_point released;  // its last release to the service
    int score = 0;  // > 0: its exits linger
  };
  using ThreadOn = std::pair<uint64_t, LocalThread>;  // a monitor and a thread of it
  // Whether t's exit of obj now keeps it back (with mu_).
  bool WouldLinger(uint64_t obj, LocalThread t) const;
  // A grouped enter that asks the service: was it t's again, right after
  // its release? (with mu_)
  void NoteEnterAfterRelease(uint64_t obj, LocalThread t);
  void NoteReleaseToService(uint64_t obj, LocalThread t);
  // Ends a linger now: hands over (outside mu_; not when leaving) and
  // sends the Exit.
  void EndLinger(std::unique_lock<std::mutex>* lock, uint64_t obj, LocalThread t,
                 bool hand_over = true);
  void LingerLoop();
  HandOverFn hand_over_;
  // Threads poked while not polling (Poke): their next poll ends at once,
  // for a poke that came after the thread looked but before it waited.
  // Bounded: a forgotten one only waits out its poll.
  std::set<uint64_t> poked_;
  static constexpr size_t kPokedKept = 1024;
  std::map<ThreadOn, LingerHistory> linger_history_;
  static constexpr size_t kLingerHistoryKept = 4096;
  std::map<ThreadOn, std::chrono::steady_clock::time_point> lingers_;  // until when
  std::condition_variable linger_cv_;
  bool linger_stop_ = false;
  std::thread linger_thread_;

  std::mutex mu_;
  // TrafficByKind's counts.
  wire::KindCounts sent_by_kind_, received_by_kind_;
  LocalMonitors local_;
  std::function<uint64_t()> mark_;
  // Whether the service ever said another node wants a monitor here: until
  // it does (sos-server without --data-with-release, never), every exit's
  // ReleaseWanted answers without taking mu_.
  std::atomic<bool> told_wanted_{false};
  std::map<LocalThread, std::shared_ptr<Pending>> pending_;
  // Queries awaiting their Queue, by nonce. Apart from pending_: a grant
  // must never be taken for a query's answer.
  std::map<uint64_t, std::shared_ptr<Pending>> queries_;
  uint64_t query_nonce_ = 0;
  std::map<uint64_t, std::string> failed_programs_;
  bool closed_ = false;
  std::string io_error_;
  uint64_t seq_ = 0;
  std::vector<uint64_t> pong_;  // per shard: the highest nonce answered
  std::condition_variable pong_cv_;
  std::vector<std::unique_ptr<Channel>> shards_;
  std::vector<std::string> shard_addresses_;
  std::vector<std::thread> readers_;
};

}  // namespace monitor
}  // namespace djava

#endif  // DJAVA_MONITOR_MONITOR_CLIENT_H_
