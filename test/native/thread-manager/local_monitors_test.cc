// Unit tests of the node-side monitor logic: re-entry, leases (local fast
// path, recall deferred to the owner's exit), wait count restore, cancelled
// grants, notify and signal under a lease, leases left by a signal.
#include "local_monitors.h"

#include <gtest/gtest.h>

namespace djava {
namespace monitor {
namespace {

using Send = LocalMonitors::Send;
constexpr uint64_t kObj = 5;
LocalThread A{1, 10}, B{1, 11};

TEST(LocalMonitorsTest, ReentryIsLocalAndExitTellsServiceOnlyAtZero) {
  LocalMonitors m;
  EXPECT_EQ(Send::kEnter, m.Enter(kObj, A));
  EXPECT_EQ(Send::kNothing, m.OnGranted(kObj, A, /*lease=*/false, /*wanted=*/true));
  EXPECT_EQ(Send::kNothing, m.Enter(kObj, A));
  EXPECT_EQ(Send::kNothing, m.Enter(kObj, A));
  EXPECT_EQ(3, m.Count(kObj, A));
  Send s;
  ASSERT_TRUE(m.Exit(kObj, A, &s));
  EXPECT_EQ(Send::kNothing, s);
  ASSERT_TRUE(m.Exit(kObj, A, &s));
  ASSERT_TRUE(m.Exit(kObj, A, &s));
  EXPECT_EQ(Send::kExit, s);
  EXPECT_FALSE(m.Exit(kObj, A, &s));  // IllegalMonitorStateException
  EXPECT_FALSE(m.Exit(kObj, B, &s));
}

TEST(LocalMonitorsTest, AReleaseKeptBackIsTheSameThreadsAloneUntilItEnds) {
  LocalMonitors m;
  EXPECT_EQ(Send::kEnter, m.Enter(kObj, A));
  EXPECT_EQ(Send::kNothing, m.OnGranted(kObj, A, /*lease=*/false, /*wanted=*/true));
  m.StartTenure(kObj, /*wanted_elsewhere=*/false, /*mark=*/42);
  EXPECT_TRUE(m.ReleasesToService(kObj, A));
  Send s;
  ASSERT_TRUE(m.Exit(kObj, A, &s, nullptr, nullptr, /*may_linger=*/true));
  EXPECT_EQ(Send::kLinger, s);
  EXPECT_FALSE(m.Owns(kObj, A)) << "no thread owns it";
  EXPECT_FALSE(m.Idle()) << "the node still holds it";
  EXPECT_FALSE(m.Exit(kObj, A, &s)) << "exiting again is still illegal";
  // Nobody else here takes it: B queues at the service, and a try is busy.
  EXPECT_EQ(Send::kBusy, m.TryEnter(kObj, B));
  EXPECT_EQ(Send::kEnter, m.Enter(kObj, B));
  // A takes it back without a message, in the same tenure.
  EXPECT_EQ(Send::kNothing, m.Enter(kObj, A));
  EXPECT_TRUE(m.Owns(kObj, A));
  EXPECT_EQ(1, m.Count(kObj, A));
  uint64_t since = 0;
  bool wanted = false;
  EXPECT_FALSE(m.Lingering(kObj, A, &since, &wanted));
  std::vector<uint64_t> released;
  EXPECT_FALSE(m.EndLinger(kObj, A, {7}, &released)) << "taken again: nothing to end";
  // Kept back again, and this time it goes: the tenure's mark, and a
  // wanted notice that arrived meanwhile, are there for the hand-over.
  ASSERT_TRUE(m.Exit(kObj, A, &s, nullptr, nullptr, /*may_linger=*/true));
  EXPECT_EQ(Send::kLinger, s);
  ASSERT_TRUE(m.Lingering(kObj, A, &since, &wanted));
  EXPECT_FALSE(wanted);
  m.OnWanted(kObj);
  ASSERT_TRUE(m.Lingering(kObj, A, &since, &wanted));
  EXPECT_EQ(42u, since);
  EXPECT_TRUE(wanted);
  EXPECT_FALSE(m.Lingering(kObj, B, &since, &wanted));
  ASSERT_TRUE(m.EndLinger(kObj, A, {7, 8}, &released));
  EXPECT_EQ((std::vector<uint64_t>{7, 8}), released);
  EXPECT_TRUE(m.Idle());
  EXPECT_FALSE(m.EndLinger(kObj, A, {}, &released)) << "once";
  // Released: A's next enter asks the service.
  EXPECT_EQ(Send::kEnter, m.Enter(kObj, A));
}

// A is granted kObj, in a tenure wanted by another node or not.
void BeginTenure(LocalMonitors* m, bool wanted_elsewhere) {
  ASSERT_EQ(Send::kEnter, m->Enter(kObj, A));
  ASSERT_EQ(Send::kNothing, m->OnGranted(kObj, A, false, true));
  m->StartTenure(kObj, wanted_elsewhere, 0);
}

// A's exit keeps kObj back and A takes it again, `times` times; each exit
// promised its linger first if `promise`.
void KeepBackAndTake(LocalMonitors* m, int times, bool promise) {
  Send s;
  for (int i = 0; i < times; i++) {
    if (promise) ASSERT_TRUE(m->PromiseLinger(kObj, A));
    ASSERT_TRUE(m->Exit(kObj, A, &s, nullptr, nullptr, true));
    ASSERT_EQ(Send::kLinger, s);
    ASSERT_EQ(Send::kNothing, m->Enter(kObj, A));
  }
}

TEST(LocalMonitorsTest, ATenureKeepsItsReleaseBackOnlySoOftenWhileAnotherNodeWaits) {
  // A thread looping on a synchronized block must not keep the monitor
  // from the other node's threads for good.
  LocalMonitors m;
  ASSERT_NO_FATAL_FAILURE(BeginTenure(&m, /*wanted_elsewhere=*/true));
  ASSERT_NO_FATAL_FAILURE(KeepBackAndTake(&m, LocalMonitors::kLingerTakesWanted, false));
  Send s;
  ASSERT_TRUE(m.Exit(kObj, A, &s, nullptr, nullptr, true));
  EXPECT_EQ(Send::kExit, s) << "its turn is over";
  // Nobody else waiting: a few more, then the release goes all the same.
  ASSERT_NO_FATAL_FAILURE(BeginTenure(&m, /*wanted_elsewhere=*/false));
  ASSERT_NO_FATAL_FAILURE(KeepBackAndTake(&m, LocalMonitors::kLingerTakes, false));
  ASSERT_TRUE(m.Exit(kObj, A, &s, nullptr, nullptr, true));
  EXPECT_EQ(Send::kExit, s);
}

// The exit that its tenure's bound lets go is not promised a linger, so
// its caller hands the tenure's data over with it; one promised a linger
// keeps it back even if the monitor is wanted between promise and exit
// (the caller skipped the hand-over, which the linger's end makes).
TEST(LocalMonitorsTest, OnlyAnExitTheBoundAllowsIsPromisedALinger) {
  LocalMonitors m;
  ASSERT_NO_FATAL_FAILURE(BeginTenure(&m, /*wanted_elsewhere=*/true));
  ASSERT_NO_FATAL_FAILURE(KeepBackAndTake(&m, LocalMonitors::kLingerTakesWanted, true));
  Send s;
  uint64_t since;
  EXPECT_FALSE(m.PromiseLinger(kObj, A)) << "past the bound: the release hands over";
  EXPECT_TRUE(m.ReleaseWanted(kObj, A, /*whole=*/false, &since));
  ASSERT_TRUE(m.Exit(kObj, A, &s, nullptr, nullptr, true));
  EXPECT_EQ(Send::kExit, s);

  // Promised while nobody else wanted it; wanted before the exit.
  ASSERT_NO_FATAL_FAILURE(BeginTenure(&m, /*wanted_elsewhere=*/false));
  ASSERT_NO_FATAL_FAILURE(KeepBackAndTake(&m, LocalMonitors::kLingerTakesWanted, false));
  ASSERT_TRUE(m.PromiseLinger(kObj, A));
  m.OnWanted(kObj);
  ASSERT_TRUE(m.Exit(kObj, A, &s, nullptr, nullptr, true));
  EXPECT_EQ(Send::kLinger, s) << "promised: kept back, to hand over when it ends";
  bool wanted = false;
  ASSERT_TRUE(m.Lingering(kObj, A, &since, &wanted));
  EXPECT_TRUE(wanted);
}

TEST(LocalMonitorsTest, NoReleaseIsKeptBackUnderALeaseOrWithASuccessor) {
  LocalMonitors m;
  EXPECT_EQ(Send::kEnter, m.Enter(kObj, A));
  EXPECT_EQ(Send::kNothing, m.OnGranted(kObj, A, /*lease=*/true, /*wanted=*/true));
  EXPECT_FALSE(m.ReleasesToService(kObj, A));
  Send s;
  ASSERT_TRUE(m.Exit(kObj, A, &s, nullptr, nullptr, /*may_linger=*/true));
  EXPECT_EQ(Send::kNothing, s) << "the lease keeps it anyway";
  LocalMonitors n;
  EXPECT_EQ(Send::kEnter, n.Enter(kObj, A));
  EXPECT_EQ(Send::kNothing, n.OnGranted(kObj, A, false, true, 0, {{B, 0, 0}}));
  EXPECT_FALSE(n.ReleasesToService(kObj, A));
  LocalMonitors::Successor next;
  ASSERT_TRUE(n.Exit(kObj, A, &s, &next, nullptr, /*may_linger=*/true));
  EXPECT_EQ(Send::kExit, s) << "handed on to B here";
  EXPECT_EQ(B, next.thread);
}

TEST(LocalMonitorsTest, LeaseMakesReacquireLocal) {
  LocalMonitors m;
  m.Enter(kObj, A);
  m.OnGranted(kObj, A, /*lease=*/true, true);
  Send s;
  ASSERT_TRUE(m.Exit(kObj, A, &s));
  EXPECT_EQ(Send::kNothing, s);  // lease kept, no message
  for (int i = 0; i < 100; i++) {
    EXPECT_EQ(Send::kNothing, m.Enter(kObj, i % 2 ? A : B));
    ASSERT_TRUE(m.Exit(kObj, i % 2 ? A : B, &s));
    EXPECT_EQ(Send::kNothing, s);
  }
  EXPECT_TRUE(m.HoldsLease(kObj));
}

TEST(LocalMonitorsTest, RecallOfFreeLeaseReturnsAtOnce) {
  LocalMonitors m;
  m.Enter(kObj, A);
  m.OnGranted(kObj, A, true, true);
  Send s;
  m.Exit(kObj, A, &s);
  EXPECT_EQ(Send::kReturnLease, m.OnRecall(kObj));
  EXPECT_FALSE(m.HoldsLease(kObj));
  EXPECT_EQ(Send::kEnter, m.Enter(kObj, A));
}

TEST(LocalMonitorsTest, RecallWhileOwnedReturnsAtExitAndStopsLocalGrants) {
  LocalMonitors m;
  m.Enter(kObj, A);
  m.OnGranted(kObj, A, true, true);
  EXPECT_EQ(Send::kNothing, m.OnRecall(kObj));
  EXPECT_TRUE(m.RecallPending(kObj));
  // Another local thread must go through the service now.
  EXPECT_EQ(Send::kEnter, m.Enter(kObj, B));
  Send s;
  ASSERT_TRUE(m.Exit(kObj, A, &s));
  EXPECT_EQ(Send::kReturnLease, s);
  EXPECT_FALSE(m.HoldsLease(kObj));
  // Re-entry of the owner during recall is still local.
  LocalMonitors m2;
  m2.Enter(kObj, A);
  m2.OnGranted(kObj, A, true, true);
  m2.OnRecall(kObj);
  EXPECT_EQ(Send::kNothing, m2.Enter(kObj, A));
  m2.Exit(kObj, A, &s);
  EXPECT_EQ(Send::kNothing, s);
  m2.Exit(kObj, A, &s);
  EXPECT_EQ(Send::kReturnLease, s);
}

TEST(LocalMonitorsTest, StaleRecallIsIgnored) {
  LocalMonitors m;
  EXPECT_EQ(Send::kNothing, m.OnRecall(kObj));
  m.Enter(kObj, A);
  m.OnGranted(kObj, A, false, true);
  EXPECT_EQ(Send::kNothing, m.OnRecall(kObj));
  EXPECT_FALSE(m.RecallPending(kObj));
}

TEST(LocalMonitorsTest, WaitRestoresCount) {
  LocalMonitors m;
  m.Enter(kObj, A);
  m.OnGranted(kObj, A, true, true);
  m.Enter(kObj, A);
  m.Enter(kObj, A);
  EXPECT_FALSE(m.BeginWait(kObj, B));
  ASSERT_TRUE(m.BeginWait(kObj, A));
  EXPECT_FALSE(m.Owns(kObj, A));
  EXPECT_FALSE(m.HoldsLease(kObj));  // wait gives the lease up
  Send s;
  EXPECT_FALSE(m.Notify(kObj, A, &s));
  m.OnGranted(kObj, A, false, true);
  EXPECT_EQ(3, m.Count(kObj, A));
}

TEST(LocalMonitorsTest, UnwantedGrantIsHandedBack) {
  LocalMonitors m;
  m.Enter(kObj, A);
  m.Forget(kObj, A);  // cancelled
  EXPECT_EQ(Send::kExit, m.OnGranted(kObj, A, false, /*wanted=*/false));
  EXPECT_FALSE(m.Owns(kObj, A));
  // A leased unwanted grant is simply kept as an idle lease.
  EXPECT_EQ(Send::kNothing, m.OnGranted(kObj, A, true, false));
  EXPECT_TRUE(m.HoldsLease(kObj));
  EXPECT_EQ(Send::kNothing, m.Enter(kObj, B));
}

// Under the lease nobody waits anywhere: notify (of any wait set) needs no
// message, but still only the owner may call it.
TEST(LocalMonitorsTest, ReleaseHandsOnToTheGrantsSuccessorsInOrder) {
  LocalMonitors m;
  const LocalThread C{1, 12};
  // B waits first (count 2), then is woken and becomes A's successor, with C.
  ASSERT_EQ(Send::kEnter, m.Enter(kObj, B));
  m.OnGranted(kObj, B, false, true);
  ASSERT_EQ(Send::kNothing, m.Enter(kObj, B));
  ASSERT_TRUE(m.BeginWait(kObj, B));
  ASSERT_EQ(Send::kEnter, m.Enter(kObj, A));
  ASSERT_EQ(Send::kEnter, m.Enter(kObj, C));
  LocalMonitors::Successor next;
  ASSERT_EQ(Send::kNothing,
            m.OnGranted(kObj, A, false, true, 0,
                        {LocalMonitors::Successor{B, 0, 7}, LocalMonitors::Successor{C, 0, 8}},
                        &next));
  EXPECT_EQ(0u, next.thread.thread) << "a wanted grant keeps the monitor";
  Send s;
  ASSERT_TRUE(m.Exit(kObj, A, &s, &next));
  EXPECT_EQ(Send::kExit, s);
  EXPECT_EQ(B, next.thread);
  EXPECT_EQ(7, next.outcome);
  EXPECT_TRUE(m.Owns(kObj, B));
  EXPECT_EQ(2, m.Count(kObj, B)) << "the woken waiter's count is back";
  // C gave up meanwhile: B's wait hands on to nobody.
  m.Forget(kObj, C);
  ASSERT_TRUE(m.BeginWait(kObj, B, &next));
  EXPECT_EQ(0u, next.thread.thread);
  EXPECT_FALSE(m.Owns(kObj, C));
}

TEST(LocalMonitorsTest, AnUnwantedGrantGoesToItsFirstSuccessor) {
  LocalMonitors m;
  ASSERT_EQ(Send::kEnter, m.Enter(kObj, B));
  LocalMonitors::Successor next;
  EXPECT_EQ(Send::kExit, m.OnGranted(kObj, A, false, false, 0,
                                     {LocalMonitors::Successor{B, 0, 0}}, &next));
  EXPECT_EQ(B, next.thread);
  EXPECT_TRUE(m.Owns(kObj, B));
  EXPECT_EQ(1, m.Count(kObj, B));
}

TEST(LocalMonitorsTest, NotifyUnderTheLeaseIsLocal) {
  LocalMonitors m;
  Send s;
  EXPECT_FALSE(m.Notify(kObj, A, &s));
  m.Enter(kObj, A);
  m.OnGranted(kObj, A, /*lease=*/false, true);
  ASSERT_TRUE(m.Notify(kObj, A, &s));
  EXPECT_EQ(Send::kNotify, s);
  EXPECT_FALSE(m.Notify(kObj, B, &s));
  m.Exit(kObj, A, &s);
  m.Enter(kObj, A);
  m.OnGranted(kObj, A, /*lease=*/true, true);
  ASSERT_TRUE(m.Notify(kObj, A, &s));
  EXPECT_EQ(Send::kNothing, s);
  EXPECT_FALSE(m.Notify(kObj, B, &s));
}

TEST(LocalMonitorsTest, SignalIsLocalOnlyOnAnIdleLease) {
  LocalMonitors m;
  EXPECT_EQ(Send::kSignal, m.Signal(kObj));  // not leased: the service decides
  m.Enter(kObj, A);
  m.OnGranted(kObj, A, /*lease=*/true, true);
  // A owns: the notify is due at its release, which may be a wait.
  EXPECT_EQ(Send::kSignal, m.Signal(kObj));
  Send s;
  m.Exit(kObj, A, &s);
  EXPECT_EQ(Send::kNothing, m.Signal(kObj));  // free, and nobody waits
  m.Enter(kObj, B);
  ASSERT_TRUE(m.BeginWait(kObj, B));  // gives the lease up
  EXPECT_EQ(Send::kSignal, m.Signal(kObj));
}

TEST(LocalMonitorsTest, LeaseLeftBySignalOwnsNothingAndServesLocalEnters) {
  LocalMonitors m;
  m.OnLeaseGranted(kObj);
  EXPECT_TRUE(m.HoldsLease(kObj));
  EXPECT_FALSE(m.Owns(kObj, A));
  EXPECT_TRUE(m.Idle());
  EXPECT_EQ(Send::kNothing, m.Signal(kObj));
  EXPECT_EQ(Send::kNothing, m.Enter(kObj, A));
  Send s;
  ASSERT_TRUE(m.Exit(kObj, A, &s));
  EXPECT_EQ(Send::kNothing, s);
  EXPECT_EQ(Send::kReturnLease, m.OnRecall(kObj));
  EXPECT_FALSE(m.HoldsLease(kObj));
}

// Cannot happen with an orderly service; if it did, the service's view (the
// node holds the lease) wins and the owner keeps the monitor.
TEST(LocalMonitorsTest, LeaseLeftBySignalWhileAThreadOwnsKeepsTheOwner) {
  LocalMonitors m;
  m.Enter(kObj, A);
  m.OnGranted(kObj, A, /*lease=*/false, true);
  m.OnLeaseGranted(kObj);
  EXPECT_TRUE(m.Owns(kObj, A));
  EXPECT_EQ(Send::kEnter, m.Enter(kObj, B));  // owned: B goes through the service
  Send s;
  ASSERT_TRUE(m.Exit(kObj, A, &s));
  EXPECT_EQ(Send::kNothing, s);  // exit under the lease: no message
  EXPECT_TRUE(m.HoldsLease(kObj));
  // A lease held already stays held, with a stale recall forgotten.
  LocalMonitors m2;
  m2.Enter(kObj, A);
  m2.OnGranted(kObj, A, /*lease=*/true, true);
  m2.OnRecall(kObj);
  m2.OnLeaseGranted(kObj);
  EXPECT_FALSE(m2.RecallPending(kObj));
  EXPECT_TRUE(m2.HoldsLease(kObj));
}

TEST(LocalMonitorsTest, TryEnterIsDecidedLocallyWhenTheNodeKnows) {
  LocalMonitors m;
  EXPECT_EQ(Send::kEnter, m.TryEnter(kObj, A, 100));  // unknown: ask the service
  EXPECT_FALSE(m.Owns(kObj, A));
  // Granted without a lease: A re-enters, B is busy, all locally.
  m.OnGranted(kObj, A, /*lease=*/false, true, 100);
  EXPECT_EQ(Send::kNothing, m.TryEnter(kObj, A, 100));
  EXPECT_EQ(2, m.Count(kObj, A));
  EXPECT_EQ(Send::kBusy, m.TryEnter(kObj, B, 101));
  EXPECT_FALSE(m.Owns(kObj, B));
  Send s;
  m.Exit(kObj, A, &s);
  m.Exit(kObj, A, &s);
  EXPECT_EQ(Send::kExit, s);
  EXPECT_EQ(Send::kEnter, m.TryEnter(kObj, B, 101));  // free here: the service decides
  // Under an idle lease the try takes the monitor; owned, others are busy.
  LocalMonitors l;
  l.OnLeaseGranted(kObj);
  EXPECT_EQ(Send::kNothing, l.TryEnter(kObj, A, 100));
  EXPECT_TRUE(l.Owns(kObj, A));
  EXPECT_EQ(Send::kBusy, l.TryEnter(kObj, B, 101));
  // Recalled while A owns: still busy (someone is queued at the service),
  // and after the lease went back the service decides again.
  EXPECT_EQ(Send::kNothing, l.OnRecall(kObj));
  EXPECT_EQ(Send::kBusy, l.TryEnter(kObj, B, 101));
  EXPECT_EQ(Send::kNothing, l.TryEnter(kObj, A, 100));  // re-entry
  l.Exit(kObj, A, &s);
  l.Exit(kObj, A, &s);
  EXPECT_EQ(Send::kReturnLease, s);
  EXPECT_EQ(Send::kEnter, l.TryEnter(kObj, B, 101));
}

TEST(LocalMonitorsTest, LocalOwnerKeepsItsThreadObjectAndKnowsStateOnlyUnderAnUnrecalledLease) {
  LocalMonitors m;
  uint64_t jt = 7;
  EXPECT_FALSE(m.LocalOwner(kObj, &jt));
  EXPECT_EQ(0u, jt);
  EXPECT_FALSE(m.KnowsState(kObj));
  m.Enter(kObj, A, 100);
  m.OnGranted(kObj, A, /*lease=*/false, true, 100);
  ASSERT_TRUE(m.LocalOwner(kObj, &jt));
  EXPECT_EQ(100u, jt);
  EXPECT_FALSE(m.KnowsState(kObj));  // no lease: others may queue or wait
  m.Enter(kObj, A, 999);             // re-entry keeps the first
  ASSERT_TRUE(m.LocalOwner(kObj, &jt));
  EXPECT_EQ(100u, jt);
  Send s;
  m.Exit(kObj, A, &s);
  m.Exit(kObj, A, &s);
  EXPECT_FALSE(m.LocalOwner(kObj, &jt));
  // Under a lease: local enters name the owner, and the node knows.
  m.OnLeaseGranted(kObj);
  EXPECT_TRUE(m.KnowsState(kObj));
  EXPECT_FALSE(m.LocalOwner(kObj, &jt));
  m.Enter(kObj, B, 101);
  ASSERT_TRUE(m.LocalOwner(kObj, &jt));
  EXPECT_EQ(101u, jt);
  m.Exit(kObj, B, &s);
  EXPECT_FALSE(m.LocalOwner(kObj, &jt));
  m.TryEnter(kObj, A, 102);
  ASSERT_TRUE(m.LocalOwner(kObj, &jt));
  EXPECT_EQ(102u, jt);
  m.OnRecall(kObj);
  EXPECT_FALSE(m.KnowsState(kObj));  // someone is queued at the service
  // A wait gives the owner up (and the lease with it).
  ASSERT_TRUE(m.BeginWait(kObj, A));
  EXPECT_FALSE(m.LocalOwner(kObj, &jt));
  EXPECT_FALSE(m.KnowsState(kObj));
  m.OnGranted(kObj, A, /*lease=*/true, true, 102);
  ASSERT_TRUE(m.LocalOwner(kObj, &jt));
  EXPECT_EQ(102u, jt);
  EXPECT_TRUE(m.KnowsState(kObj));
}

// Data leaves with the release: a tenure that another node wants ends with
// its last release to the service, which takes the ids noted for it.
TEST(LocalMonitorsTest, AWantedTenureHandsItsReleaseTheNotedIds) {
  LocalMonitors m;
  Send s;
  uint64_t since = 0;
  m.Enter(kObj, A);
  m.OnGranted(kObj, A, /*lease=*/false, true);
  m.StartTenure(kObj, /*wanted_elsewhere=*/false, 7);
  EXPECT_FALSE(m.ReleaseWanted(kObj, A, false, &since)) << "nobody else asked";
  m.OnWanted(kObj);
  m.Enter(kObj, A);  // re-entered: only the last exit releases
  EXPECT_FALSE(m.ReleaseWanted(kObj, A, false, &since));
  EXPECT_TRUE(m.ReleaseWanted(kObj, A, /*whole=*/true, &since)) << "a wait releases fully";
  EXPECT_FALSE(m.ReleaseWanted(kObj, B, true, &since)) << "B owns nothing";
  std::vector<uint64_t> released;
  ASSERT_TRUE(m.Exit(kObj, A, &s, nullptr, &released));
  EXPECT_TRUE(released.empty());
  ASSERT_TRUE(m.ReleaseWanted(kObj, A, false, &since));
  EXPECT_EQ(7u, since);
  m.NoteReleased(kObj, B, {1});  // not B's to note
  m.NoteReleased(kObj, A, {11, 12});
  LocalMonitors::Successor next;
  ASSERT_TRUE(m.Exit(kObj, A, &s, &next, &released));
  EXPECT_EQ(Send::kExit, s);
  EXPECT_EQ((std::vector<uint64_t>{11, 12}), released);
  // The next tenure starts afresh: told again by its own grant.
  m.Enter(kObj, B);
  m.OnGranted(kObj, B, false, true);
  m.StartTenure(kObj, /*wanted_elsewhere=*/true, 9);
  ASSERT_TRUE(m.ReleaseWanted(kObj, B, true, &since));
  EXPECT_EQ(9u, since);
  released = {5};
  ASSERT_TRUE(m.BeginWait(kObj, B, &next, &released));
  EXPECT_TRUE(released.empty()) << "nothing noted for this one";
  // A notice that crossed the release finds no tenure.
  m.OnWanted(kObj);
  m.OnGranted(kObj, B, false, true);
  m.StartTenure(kObj, false, 10);
  EXPECT_FALSE(m.ReleaseWanted(kObj, B, true, &since));
}

TEST(LocalMonitorsTest, AWantedNoticeAheadOfItsGrantIsKeptForItsTenureOnly) {
  LocalMonitors m;
  uint64_t since = 0;
  Send s;
  // The grant of tenure 5 waits for its data; the notice about it does not.
  m.Enter(kObj, A);
  m.OnWanted(kObj, 5);
  m.OnGranted(kObj, A, false, true);
  m.StartTenure(kObj, false, 1, false, 5);
  EXPECT_TRUE(m.ReleaseWanted(kObj, A, false, &since));
  m.Exit(kObj, A, &s);
  // A notice about an earlier tenure, arriving late, says nothing of this one.
  m.Enter(kObj, A);
  m.OnWanted(kObj, 5);
  m.OnGranted(kObj, A, false, true);
  m.StartTenure(kObj, false, 2, false, 7);
  EXPECT_FALSE(m.ReleaseWanted(kObj, A, false, &since));
  m.OnWanted(kObj, 6);
  EXPECT_FALSE(m.ReleaseWanted(kObj, A, false, &since)) << "tenure 6 is over";
  m.OnWanted(kObj, 7);
  EXPECT_TRUE(m.ReleaseWanted(kObj, A, false, &since));
}

TEST(LocalMonitorsTest, ANotifyWithWaitersElsewhereMakesTheReleaseWanted) {
  LocalMonitors m;
  uint64_t since = 0;
  m.Enter(kObj, A);
  m.OnGranted(kObj, A, false, true);
  m.StartTenure(kObj, false, 4, /*waiters_elsewhere=*/false);
  m.Notified(kObj);
  EXPECT_FALSE(m.ReleaseWanted(kObj, A, false, &since)) << "its waiters are all here";
  Send s;
  m.Exit(kObj, A, &s);
  m.Enter(kObj, A);
  m.OnGranted(kObj, A, false, true);
  m.StartTenure(kObj, false, 5, /*waiters_elsewhere=*/true);
  EXPECT_FALSE(m.ReleaseWanted(kObj, A, true, &since)) << "nobody notified yet";
  m.Notified(kObj);
  ASSERT_TRUE(m.ReleaseWanted(kObj, A, true, &since));
  EXPECT_EQ(5u, since);
}

TEST(LocalMonitorsTest, ATenureHandedOnWithinTheNodeEndsWithTheLastSuccessor) {
  LocalMonitors m;
  Send s;
  uint64_t since = 0;
  m.Enter(kObj, A);
  m.Enter(kObj, B);
  LocalMonitors::Successor next;
  m.OnGranted(kObj, A, false, true, 0, {LocalMonitors::Successor{B, 0, 0}}, &next);
  m.StartTenure(kObj, true, 3);
  EXPECT_FALSE(m.ReleaseWanted(kObj, A, false, &since)) << "B here is next";
  std::vector<uint64_t> released = {1};
  ASSERT_TRUE(m.Exit(kObj, A, &s, &next, &released));
  EXPECT_EQ(B, next.thread);
  ASSERT_TRUE(m.ReleaseWanted(kObj, B, false, &since)) << "the tenure goes on with B";
  EXPECT_EQ(3u, since);
  // Under a lease nothing is handed over (a Recall takes the lease back).
  LocalMonitors l;
  l.Enter(kObj, A);
  l.OnGranted(kObj, A, /*lease=*/true, true);
  l.StartTenure(kObj, true, 3);
  l.OnWanted(kObj);
  EXPECT_FALSE(l.ReleaseWanted(kObj, A, false, &since));
}

}  // namespace
}  // namespace monitor
}  // namespace djava
