// LocalMonitors: a node's own view of the monitors its threads use, with no
// I/O and no blocking. It decides, for each Java monitor operation, whether
// the node can complete it locally (re-entry; enter/exit under a lease) or
// must tell the monitor service, and what to do with the service's events.
// The networked client (monitor_client.cc) wraps it with a mutex, the
// connection, and per-thread blocking.
//
// Per object it keeps: the local owner thread (and its Thread object's shared
// id, for state queries) and its re-entry count, whether
// the node holds the lease, whether the lease was recalled, and the counts of
// threads in wait() so that re-acquiring restores them (JLS 17.2.1).
//
// The service grants a lease only while nobody waits on the monitor, and a
// wait gives it back: while the node holds the lease, no thread anywhere
// waits on it, so notify and signal have nobody to wake (no message).
//
// A grant may name successors: other threads of this node that the service
// granted the monitor after the grantee (node hand-offs, monitor.proto
// Granted). The owner's release then hands the monitor to the first of them
// here, and the Exit or Wait sent names it; a successor whose request was
// given up meanwhile is skipped (its CancelEnter went first).
#ifndef DJAVA_MONITOR_LOCAL_MONITORS_H_
#define DJAVA_MONITOR_LOCAL_MONITORS_H_

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <vector>

namespace djava {
namespace monitor {

struct LocalThread {
  uint64_t program = 0;
  uint64_t thread = 0;
  bool operator==(const LocalThread& o) const {
    return program == o.program && thread == o.thread;
  }
  bool operator!=(const LocalThread& o) const { return !(*this == o); }
  bool operator<(const LocalThread& o) const {
    return program != o.program ? program < o.program : thread < o.thread;
  }
};

class LocalMonitors {
 public:
  enum class Send { kNothing, kEnter, kExit, kWait, kNotify, kReturnLease, kSignal, kBusy, kLinger };

  // A thread the service granted the monitor after its owner (a successor).
  // `outcome` is the caller's, returned with it by the hand-off (how the
  // successor's blocked request ends).
  struct Successor {
    LocalThread thread;
    uint64_t java_thread = 0;
    int outcome = 0;
  };

  // monitorenter. kNothing: the thread owns the monitor now (re-entry, or
  // the node's lease). kEnter: send Enter and block until OnGranted/OnFailed.
  // `java_thread`: the thread's Thread object (0: none), kept for the owner.
  Send Enter(uint64_t obj, LocalThread t, uint64_t java_thread = 0);
  // An enter that must not block (ReentrantLock.tryLock). kNothing: owned
  // now (re-entry, or the node's idle lease). kBusy: another local thread
  // owns it, or the lease is recalled (someone is queued at the service):
  // nothing changes. kEnter: ask the service (Enter with try_only), which
  // grants at once or answers Busy.
  Send TryEnter(uint64_t obj, LocalThread t, uint64_t java_thread = 0);
  // monitorexit. Returns false if `t` does not own the monitor
  // (IllegalMonitorStateException); *send says what to send. If the last
  // exit handed the monitor to a successor, *next is it (it owns the
  // monitor now; the Exit names it), else next->thread is {0, 0}.
  // *released (if given): the ids NoteReleased left for this release, when
  // it goes to the service (kExit without a successor).
  //
  // may_linger: a last exit that would release to the service keeps the
  // monitor back instead (*send kLinger): no thread owns it, but the node
  // still holds it for t, whose next Enter takes it without a message, and
  // nobody else's (another thread here queues at the service). The tenure
  // goes on until EndLinger releases it (MonitorClient, after a moment).
  // Bounded: while another node wants the monitor, a tenure keeps it back
  // kLingerTakesWanted times, else kLingerTakes (a thread that loops on a
  // synchronized block must not starve the others).
  static constexpr int kLingerTakes = 4;
  static constexpr int kLingerTakesWanted = 1;
  bool Exit(uint64_t obj, LocalThread t, Send* send, Successor* next = nullptr,
            std::vector<uint64_t>* released = nullptr, bool may_linger = false);
  // Whether t's exit of obj now would be its last and release the monitor
  // to the service (not under a lease, no successor here).
  bool ReleasesToService(uint64_t obj, LocalThread t) const;
  // Whether t's last exit of obj, made with may_linger, keeps it back: it
  // releases to the service and the tenure's bound allows one more. True
  // promises the linger to that exit even if the monitor is wanted
  // meanwhile (a wanted notice arriving between the two): the caller
  // skipped the release's hand-over, which the linger's end makes instead.
  bool PromiseLinger(uint64_t obj, LocalThread t);
  // A linger of t on obj is still on: *since is its tenure's mark, *wanted
  // whether another node wants the monitor.
  bool Lingering(uint64_t obj, LocalThread t, uint64_t* since, bool* wanted) const;
  // Ends t's linger on obj, if still on: the release goes to the service
  // now, naming `handed` as written home for it (*released). False if t
  // entered again meanwhile (or the linger is gone).
  bool EndLinger(uint64_t obj, LocalThread t, const std::vector<uint64_t>& handed,
                 std::vector<uint64_t>* released);
  // Object.wait: false if `t` does not own the monitor. Otherwise the monitor
  // is released locally with its count saved: send Wait and block. *next as
  // for Exit.
  bool BeginWait(uint64_t obj, LocalThread t, Successor* next = nullptr,
                 std::vector<uint64_t>* released = nullptr);
  // Object.notify/notifyAll (any wait set): false if `t` does not own the
  // monitor; otherwise *send is kNotify, or kNothing under the lease.
  bool Notify(uint64_t obj, LocalThread t, Send* send) const;
  // A signal (notify in the monitor's next free turn, by any thread):
  // kNothing when the node holds the lease and no thread here owns the
  // monitor (it is free now, and nobody waits); otherwise kSignal.
  Send Signal(uint64_t obj) const;

  // Service events. OnGranted returns what to send back: kExit when the grant
  // is for a request the node has cancelled (not `wanted`), else kNothing.
  // `java_thread`: the grantee's Thread object, as its request named it.
  // `successors`: the grant's, those whose requests are still blocked here;
  // an unwanted grant goes to the first of them at once (*next, as Exit's).
  Send OnGranted(uint64_t obj, LocalThread t, bool lease, bool wanted,
                 uint64_t java_thread = 0, const std::vector<Successor>& successors = {},
                 Successor* next = nullptr);
  // Data leaves with the release (monitor.proto, Wanted). A thread's grant
  // from the service starts the node's tenure of the monitor (successors it
  // hands the monitor on to continue it): `mark` is where the node's
  // exclusive chunks stood when its request was sent
  // (djava_sos_exclusive_mark), and
  // wanted_elsewhere whether another node's thread was queued already.
  // waiters_elsewhere: threads of another node wait on it (Object.wait, or
  // a condition's await), so that a notify or signal in the tenure
  // (Notified) makes them want it.
  // tenure: the grant's number (Granted.tenure; 0: none).
  void StartTenure(uint64_t obj, bool wanted_elsewhere, uint64_t mark,
                   bool waiters_elsewhere = false, uint64_t tenure = 0);
  void Notified(uint64_t obj);
  // Another node's thread queued for the monitor during tenure `tenure`,
  // whose grant may still be on its way (it waits for the data moved with
  // it): kept for it then.
  void OnWanted(uint64_t obj, uint64_t tenure = 0);
  // Whether t's release of obj (its last exit, or a wait if `whole`) hands
  // the monitor to another node that wants it: t owns it, not under a
  // lease, with no successor here, and another node asked. *since: the
  // tenure's mark.
  bool ReleaseWanted(uint64_t obj, LocalThread t, bool whole, uint64_t* since) const;
  // The chunks the node wrote home for t's coming release (Exit.released).
  void NoteReleased(uint64_t obj, LocalThread t, const std::vector<uint64_t>& ids);
  // A Signal of this node left it the lease (Granted, reason SIGNALLED): no
  // thread owns the monitor by it, and nothing is sent back.
  void OnLeaseGranted(uint64_t obj);
  // A Recall: kReturnLease now, or kNothing (returned at the owner's exit,
  // or no lease held: a stale recall crossing our Wait/Exit).
  Send OnRecall(uint64_t obj);
  // A blocked enter or wait was given up (cancel, failure): forget saved
  // state of `t` on `obj`, and its place among the successors.
  void Forget(uint64_t obj, LocalThread t);

  bool Owns(uint64_t obj, LocalThread t) const;
  int Count(uint64_t obj, LocalThread t) const;
  bool HoldsLease(uint64_t obj) const;
  // No thread of the node owns a monitor or waits on one (leases aside).
  bool Idle() const;
  // The objects whose lease the node holds.
  std::vector<uint64_t> Leases() const;
  bool RecallPending(uint64_t obj) const;
  // Whether a thread of this node owns the monitor; if so *java_thread is
  // the Thread object its enter named (0: none).
  bool LocalOwner(uint64_t obj, uint64_t* java_thread) const;
  // The node holds the lease and it is not recalled: no thread of another
  // node owns, waits on or (barring an enter in flight) is queued for the
  // monitor, so a state query may be answered here.
  bool KnowsState(uint64_t obj) const;

 private:
  struct State {
    bool owned = false;
    LocalThread owner;
    uint64_t owner_java_thread = 0;
    int count = 0;
    bool lease = false;
    bool recall_pending = false;
    bool lingering = false;  // owner's release kept back (Exit's may_linger)
    int linger_takes = 0;    // in this tenure: bounded, so another node gets its turn
    bool linger_promised = false;  // PromiseLinger's, for the exit that follows
    std::map<LocalThread, int> saved;  // threads in wait(): their counts
    std::deque<Successor> successors;  // handed the monitor next, in order
    // The tenure (StartTenure): its mark, whether another node wants the
    // monitor, and what the release names as written home for it.
    uint64_t tenure_mark = 0;
    bool wanted_elsewhere = false;
    bool waiters_elsewhere = false;
    uint64_t tenure = 0;
    std::vector<uint64_t> released;
  };
  // Wanted notices ahead of their grants: object -> tenure (bounded).
  std::map<uint64_t, uint64_t> early_wanted_;
  static constexpr size_t kEarlyWantedKept = 1024;
  // The tenure ends with a release to the service.
  static void EndTenure(State* s, std::vector<uint64_t>* released);
  // t's enter takes back the release it kept back, if it did.
  static bool TakeKept(State* s, LocalThread t, uint64_t java_thread);
  // The owner released the monitor (not under a lease): the first successor
  // owns it now (*next; false if there is none).
  bool HandOn(State* s, Successor* next);
  void MaybeErase(uint64_t obj);
  std::map<uint64_t, State> states_;
};

}  // namespace monitor
}  // namespace djava

#endif  // DJAVA_MONITOR_LOCAL_MONITORS_H_
