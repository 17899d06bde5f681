// C ABI of the monitor client (include/djava/monitor_client.h). Nothing may
// escape: every entry point catches everything. djava_monitor_connect lives
// in monitor_connect.cc (it needs the wire library).
#include <algorithm>
#include <cstring>
#include <exception>
#include <string>
#include <vector>

#include "djava/monitor_client.h"
#include "monitor_capi_internal.h"
#include "wire/traffic.h"

using djava::monitor::KeyedWaiter;
using djava::monitor::LocalThread;
using djava::monitor::MonitorClient;
using djava::monitor::MonitorState;

namespace {
thread_local std::string capi_error;
thread_local bool capi_error_set = false;

// Runs f on the client; a null client returns `bad_argument`, an exception
// `broken`, each with its message.
template <typename R, typename F>
R Guard(djava_monitor_client* c, R bad_argument, R broken, F f) {
  capi_error_set = false;
  if (c == nullptr || !c->impl) {
    capi_error = "null monitor client";
    capi_error_set = true;
    return bad_argument;
  }
  try {
    return f(c->impl.get());
  } catch (const std::exception& e) {
    capi_error = std::string("internal error: ") + e.what();
  } catch (...) {
    capi_error = "internal error";
  }
  capi_error_set = true;
  return broken;
}
template <typename F>
int Guard(djava_monitor_client* c, F f) {
  return Guard<int>(c, DJAVA_MON_BAD_ARGUMENT, DJAVA_MON_IO, f);
}
int BadArgument(const char* why) {
  capi_error = why;
  capi_error_set = true;
  return DJAVA_MON_BAD_ARGUMENT;
}
}  // namespace

extern "C" {

void djava_monitor_close(djava_monitor_client* c) {
  try {
    delete c;
  } catch (...) {
  }
}

void djava_monitor_disconnect(djava_monitor_client* c) {
  Guard(c, [](MonitorClient* m) {
    m->Close();
    return DJAVA_MON_OK;
  });
}

int djava_monitor_enter(djava_monitor_client* c, uint64_t object, uint64_t program,
                        uint64_t thread) {
  return djava_monitor_enter_polled(c, object, program, thread, 0, 0, -1, 0);
}

int djava_monitor_enter_grouped(djava_monitor_client* c, uint64_t object, uint64_t program,
                                uint64_t thread) {
  return Guard(c, [&](MonitorClient* m) {
    return m->EnterGrouped(object, LocalThread{program, thread});
  });
}

int djava_monitor_enter_polled(djava_monitor_client* c, uint64_t object, uint64_t program,
                               uint64_t thread, uint64_t java_thread, int64_t timeout_ms,
                               int64_t poll_ms, uint32_t flags) {
  return Guard(c, [&](MonitorClient* m) {
    return m->EnterPolled(object, LocalThread{program, thread}, java_thread, timeout_ms,
                          poll_ms, /*grouped=*/false, (flags & DJAVA_MON_ENTER_BARGING) != 0);
  });
}

int djava_monitor_enter_more(djava_monitor_client* c, uint64_t program, uint64_t thread,
                             int64_t poll_ms) {
  return Guard(c, [&](MonitorClient* m) {
    return m->EnterMore(LocalThread{program, thread}, poll_ms);
  });
}

int djava_monitor_try_enter(djava_monitor_client* c, uint64_t object, uint64_t program,
                            uint64_t thread, uint64_t java_thread) {
  return Guard(c, [&](MonitorClient* m) {
    return m->TryEnter(object, LocalThread{program, thread}, java_thread);
  });
}

void djava_monitor_poke(djava_monitor_client* c, uint64_t thread) {
  Guard(c, 0, 0, [&](MonitorClient* m) {
    m->Poke(thread);
    return 0;
  });
}

int djava_monitor_exit(djava_monitor_client* c, uint64_t object, uint64_t program,
                       uint64_t thread) {
  return Guard(c, [&](MonitorClient* m) { return m->Exit(object, LocalThread{program, thread}); });
}

void djava_monitor_set_mark_source(djava_monitor_client* c, uint64_t (*mark)(void* context),
                                   void* context) {
  Guard(c, 0, 0, [&](MonitorClient* m) {
    if (mark == nullptr)
      m->SetMarkSource(nullptr);
    else
      m->SetMarkSource([mark, context] { return mark(context); });
    return 0;
  });
}

void djava_monitor_set_hand_over(djava_monitor_client* c,
                                 size_t (*hand_over)(void* context, uint64_t object,
                                                     uint64_t since, uint64_t program,
                                                     uint64_t* out, size_t max),
                                 void* context) {
  Guard(c, 0, 0, [&](MonitorClient* m) {
    if (hand_over == nullptr) {
      m->SetHandOver(nullptr);
    } else {
      m->SetHandOver([hand_over, context](uint64_t object, uint64_t since, uint64_t program) {
        uint64_t ids[8];  // as many as the directory moves with a lock
        const size_t n = hand_over(context, object, since, program, ids, 8);
        return std::vector<uint64_t>(ids, ids + std::min<size_t>(n, 8));
      });
    }
    return 0;
  });
}

int djava_monitor_release_wanted(djava_monitor_client* c, uint64_t object, uint64_t program,
                                 uint64_t thread, int whole, uint64_t* since) {
  return Guard(c, 0, 0, [&](MonitorClient* m) {
    return m->ReleaseWanted(object, LocalThread{program, thread}, whole != 0, since) ? 1 : 0;
  });
}

void djava_monitor_note_released(djava_monitor_client* c, uint64_t object, uint64_t program,
                                 uint64_t thread, const uint64_t* ids, size_t n) {
  Guard(c, 0, 0, [&](MonitorClient* m) {
    m->NoteReleased(object, LocalThread{program, thread},
                    std::vector<uint64_t>(ids, ids + (ids != nullptr ? n : 0)));
    return 0;
  });
}

int djava_monitor_wait(djava_monitor_client* c, uint64_t object, uint64_t program,
                       uint64_t thread, int64_t timeout_ms) {
  return Guard(c, [&](MonitorClient* m) {
    return m->Wait(object, LocalThread{program, thread}, timeout_ms);
  });
}

int djava_monitor_wait_polled(djava_monitor_client* c, uint64_t object, uint64_t program,
                              uint64_t thread, int64_t timeout_ms, int64_t poll_ms) {
  return djava_monitor_wait_keyed(c, object, program, thread, 0, 0, timeout_ms, poll_ms);
}

int djava_monitor_wait_keyed(djava_monitor_client* c, uint64_t object, uint64_t program,
                             uint64_t thread, uint64_t key, uint64_t java_thread,
                             int64_t timeout_ms, int64_t poll_ms) {
  if (poll_ms < 0) return BadArgument("poll interval is negative");
  return Guard(c, [&](MonitorClient* m) {
    return m->WaitKeyed(object, LocalThread{program, thread}, key, java_thread, timeout_ms,
                        poll_ms);
  });
}

int djava_monitor_wait_in_line(djava_monitor_client* c, uint64_t object, uint64_t program,
                               uint64_t thread, uint64_t key, uint64_t java_thread,
                               int64_t timeout_ms, int64_t poll_ms, uint64_t place) {
  if (poll_ms < 0) return BadArgument("poll interval is negative");
  if (place == 0) return BadArgument("a wait in line needs a place");
  return Guard(c, [&](MonitorClient* m) {
    return m->WaitKeyed(object, LocalThread{program, thread}, key, java_thread, timeout_ms,
                        poll_ms, place);
  });
}

uint64_t djava_monitor_last_place(int* first_in_line) {
  MonitorClient::LinePlace p = MonitorClient::LastPlace();
  if (first_in_line != nullptr) *first_in_line = p.first ? 1 : 0;
  return p.place;
}

int djava_monitor_wait_more(djava_monitor_client* c, uint64_t program, uint64_t thread,
                            int64_t poll_ms) {
  if (poll_ms < 0) return BadArgument("poll interval is negative");
  return Guard(c, [&](MonitorClient* m) {
    return m->WaitMore(LocalThread{program, thread}, poll_ms);
  });
}

int djava_monitor_arrive(djava_monitor_client* c, uint64_t object, uint64_t program,
                         uint64_t thread, uint32_t parties, int command, int timed,
                         uint64_t timeout_ns, int interrupted, uint64_t java_thread,
                         int64_t poll_ms) {
  if (poll_ms < 0) return BadArgument("poll interval is negative");
  return Guard(c, [&](MonitorClient* m) {
    return m->Arrive(object, LocalThread{program, thread}, parties, command != 0, timed != 0,
                     timeout_ns, interrupted != 0, java_thread, poll_ms);
  });
}

uint32_t djava_monitor_barrier_index(void) { return MonitorClient::LastBarrier().index; }

int djava_monitor_barrier_op(djava_monitor_client* c, uint64_t object, uint64_t program,
                             uint64_t thread, int op, int* broken, uint32_t* waiting) {
  int st = Guard(c, [&](MonitorClient* m) {
    return m->BarrierOp(object, LocalThread{program, thread}, op);
  });
  if (st == DJAVA_MON_OK) {
    MonitorClient::BarrierResult r = MonitorClient::LastBarrier();
    if (broken != nullptr) *broken = r.broken ? 1 : 0;
    if (waiting != nullptr) *waiting = r.waiting;
  }
  return st;
}

int djava_monitor_notify(djava_monitor_client* c, uint64_t object, uint64_t program,
                         uint64_t thread, int all) {
  return djava_monitor_notify_keyed(c, object, program, thread, 0, all);
}

int djava_monitor_notify_keyed(djava_monitor_client* c, uint64_t object, uint64_t program,
                               uint64_t thread, uint64_t key, int all) {
  return Guard(c, [&](MonitorClient* m) {
    return m->NotifyKeyed(object, LocalThread{program, thread}, key, all != 0);
  });
}

int djava_monitor_signal(djava_monitor_client* c, uint64_t object, uint64_t program,
                         uint64_t thread, uint64_t key, int all, uint64_t to_key) {
  return Guard(c, [&](MonitorClient* m) {
    return m->Signal(object, LocalThread{program, thread}, key, all != 0, to_key);
  });
}

int64_t djava_monitor_queue(djava_monitor_client* c, uint64_t object, uint64_t program,
                            uint64_t thread, uint64_t* keys, uint64_t* java_threads,
                            size_t cap) {
  if (cap > 0 && (keys == nullptr || java_threads == nullptr)) {
    BadArgument("null output array");
    return -1;
  }
  return Guard<int64_t>(c, -1, -1, [&](MonitorClient* m) -> int64_t {
    std::vector<KeyedWaiter> waiters;
    if (m->Queue(object, LocalThread{program, thread}, &waiters) != DJAVA_MON_OK) return -1;
    for (size_t i = 0; i < waiters.size() && i < cap; i++) {
      keys[i] = waiters[i].key;
      java_threads[i] = waiters[i].java_thread;
    }
    return static_cast<int64_t>(waiters.size());
  });
}

int djava_monitor_state(djava_monitor_client* c, uint64_t object, uint64_t program,
                        uint64_t thread, int* owned, uint64_t* owner_java_thread,
                        uint64_t* keys, uint64_t* java_threads, size_t cap, int64_t* count) {
  if (cap > 0 && (keys == nullptr || java_threads == nullptr))
    return BadArgument("null output array");
  return Guard(c, [&](MonitorClient* m) -> int {
    MonitorState st;
    if (int r = m->State(object, LocalThread{program, thread}, &st)) return r;
    if (owned != nullptr) *owned = st.owned ? 1 : 0;
    if (owner_java_thread != nullptr) *owner_java_thread = st.owner_java_thread;
    size_t i = 0;
    for (const auto* list : {&st.entering, &st.waiters}) {
      for (const KeyedWaiter& w : *list) {
        if (i < cap) {
          keys[i] = w.key;
          java_threads[i] = w.java_thread;
        }
        i++;
      }
    }
    if (count != nullptr) *count = static_cast<int64_t>(i);
    return DJAVA_MON_OK;
  });
}

int djava_monitor_interrupt(djava_monitor_client* c, uint64_t program, uint64_t thread) {
  return Guard(c, [&](MonitorClient* m) { return m->Interrupt(LocalThread{program, thread}); });
}

int djava_monitor_cancel(djava_monitor_client* c, uint64_t program, uint64_t thread) {
  return Guard(c, [&](MonitorClient* m) { return m->Cancel(LocalThread{program, thread}); });
}

int djava_monitor_free_program(djava_monitor_client* c, uint64_t program) {
  return Guard(c, [&](MonitorClient* m) { return m->FreeProgram(program); });
}

int djava_monitor_ping(djava_monitor_client* c) {
  return Guard(c, [&](MonitorClient* m) { return m->Ping(); });
}

size_t djava_monitor_traffic(djava_monitor_client* c, char* out, size_t max) {
  return Guard(c, size_t{0}, size_t{0}, [&](MonitorClient* m) {
    return djava::wire::CopyTextOut(m->TrafficByKind(), out, max);
  });
}

int djava_monitor_count(djava_monitor_client* c, uint64_t object, uint64_t program,
                        uint64_t thread) {
  return Guard(c, [&](MonitorClient* m) { return m->Count(object, LocalThread{program, thread}); });
}

const char* djava_monitor_last_error(void) {
  return capi_error_set ? capi_error.c_str() : MonitorClient::LastError().c_str();
}

}  // extern "C"
