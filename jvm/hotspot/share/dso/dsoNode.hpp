/*
 * djava: this JVM as a node of a cluster. With -XX:+DistributedJava the VM
 * loads libdjava_node.so (the shared-object cache, the monitor client and
 * the thread-manager client, built by CMake with exceptions and protobuf
 * inside, C ABIs outside), joins the cluster named by -XX:DjavaCluster,
 * registers the program it launches, and leaves at exit.
 */

#ifndef SHARE_DSO_DSONODE_HPP
#define SHARE_DSO_DSONODE_HPP

#include "memory/allStatic.hpp"
#include "memory/allocation.hpp"
#include "utilities/globalDefinitions.hpp"

#include "dso/abi/monitor_client.h"
#include "dso/abi/sos_client.h"
#include "dso/abi/tm_client.h"

class JavaCallArguments;
class JavaThread;

// Every libdjava_node.so function the VM calls, resolved once at join.
// X(name) for each: the member is `name` with the prefix djava_ removed.
#define DSO_NODE_FUNCTIONS(X)                                                  \
  X(djava_node_abi_version)                                                   \
  X(djava_node_traffic)                                                       \
  X(djava_node_connections)                                                   \
  X(djava_tm_connect)                                                         \
  X(djava_tm_close)                                                           \
  X(djava_tm_register_program_sized)                                          \
  X(djava_tm_sos_servers)                                                     \
  X(djava_tm_program_end)                                                     \
  X(djava_tm_last_error)                                                      \
  X(djava_tm_register_server)                                                 \
  X(djava_tm_submit)                                                          \
  X(djava_tm_thread_ended)                                                    \
  X(djava_tm_watch)                                                           \
  X(djava_tm_wait_thread)                                                     \
  X(djava_tm_program_exit)                                                    \
  X(djava_tm_next_event)                                                      \
  X(djava_tm_buffer_free)                                                     \
  X(djava_tm_answer_resource)                                                 \
  X(djava_tm_fetch_resource)                                                  \
  X(djava_tm_console)                                                         \
  X(djava_tm_gather_statistics)                                               \
  X(djava_tm_answer_statistics)                                               \
  X(djava_tm_unpark)                                                          \
  X(djava_tm_query_thread_state)                                              \
  X(djava_tm_answer_thread_state)                                             \
  X(djava_tm_query_thread_stack)                                              \
  X(djava_tm_answer_thread_stack)                                             \
  X(djava_sos_meta_of)                                                        \
  X(djava_sos_connect)                                                        \
  X(djava_sos_leave)                                                          \
  X(djava_sos_node)                                                           \
  X(djava_sos_lost)                                                           \
  X(djava_sos_status_name)                                                    \
  X(djava_sos_alloc)                                                          \
  X(djava_sos_alloc_run)                                                      \
  X(djava_sos_prefetch)                                                       \
  X(djava_sos_prefetch_exclusive)                                             \
  X(djava_sos_prefetch_first_writes)                                          \
  X(djava_sos_prefetch_window)                                                \
  X(djava_sos_chunk_for)                                                      \
  X(djava_sos_id)                                                             \
  X(djava_sos_set_user)                                                       \
  X(djava_sos_user)                                                           \
  X(djava_sos_load)                                                           \
  X(djava_sos_lock)                                                           \
  X(djava_sos_release)                                                        \
  X(djava_sos_free)                                                           \
  X(djava_sos_discard)                                                        \
  X(djava_sos_retry_deferred)                                                 \
  X(djava_sos_drop_copy)                                                      \
  X(djava_sos_forget_program)                                                 \
  X(djava_sos_unreferenced)                                                   \
  X(djava_sos_retain)                                                         \
  X(djava_sos_write_back)                                                     \
  X(djava_sos_exclusive_mark)                                                 \
  X(djava_sos_hand_over)                                                      \
  X(djava_sos_unretain)                                                       \
  X(djava_sos_take_chunk_stats)                                               \
  X(djava_sos_produced_refs)                                                  \
  X(djava_sos_hold_handles)                                                   \
  X(djava_sos_unhold_handles)                                                 \
  X(djava_sos_handle_count)                                                   \
  X(djava_sos_size)                                                           \
  X(djava_sos_chunk_stats)                                                    \
  X(djava_sos_get_stats)                                                      \
  X(djava_sos_traffic)                                                        \
  X(djava_sos_word)                                                           \
  X(djava_sos_release_last)                                                   \
  X(djava_monitor_connect)                                                    \
  X(djava_monitor_disconnect)                                                 \
  X(djava_monitor_enter)                                                      \
  X(djava_monitor_enter_grouped)                                              \
  X(djava_monitor_enter_polled)                                               \
  X(djava_monitor_enter_more)                                                 \
  X(djava_monitor_try_enter)                                                  \
  X(djava_monitor_cancel)                                                     \
  X(djava_monitor_notify_keyed)                                               \
  X(djava_monitor_state)                                                      \
  X(djava_monitor_exit)                                                       \
  X(djava_monitor_set_mark_source)                                            \
  X(djava_monitor_set_hand_over)                                              \
  X(djava_monitor_release_wanted)                                             \
  X(djava_monitor_note_released)                                              \
  X(djava_monitor_wait_keyed)                                                 \
  X(djava_monitor_wait_more)                                                  \
  X(djava_monitor_wait_in_line)                                               \
  X(djava_monitor_last_place)                                                 \
  X(djava_monitor_interrupt)                                                  \
  X(djava_monitor_poke)                                                       \
  X(djava_monitor_traffic)                                                    \
  X(djava_monitor_notify)                                                     \
  X(djava_monitor_signal)                                                     \
  X(djava_monitor_queue)                                                      \
  X(djava_monitor_count)                                                      \
  X(djava_monitor_arrive)                                                     \
  X(djava_monitor_barrier_index)                                              \
  X(djava_monitor_barrier_op)                                                 \
  X(djava_monitor_last_error)

extern "C" uint32_t djava_node_abi_version();
// What this process's cluster connections carried: frames sent, their
// bytes, frames received, their bytes (sos-client/node/node_library.cc).
extern "C" void djava_node_traffic(uint64_t counts[4]);
// This process's authenticated connections: [0] on tcp, [1] on ucx.
extern "C" void djava_node_connections(uint64_t counts[2]);

struct DsoNodeLibrary {
#define DSO_NODE_MEMBER(name) decltype(&::name) name;
  DSO_NODE_FUNCTIONS(DSO_NODE_MEMBER)
#undef DSO_NODE_MEMBER
};

class DsoNode : AllStatic {
 public:
  // The interface version this VM was built against (node_library.cc).
  static const uint32_t abi_version = 34;

  // With -XX:+DistributedJava: load the library and join the cluster. A
  // failure ends the VM during initialization with a message saying what
  // could not be reached and why.
  static void join(JavaThread* current);
  // Ends this program's part in the cluster (before_exit): the program is
  // reported ended, modified shared objects are written back, connections
  // close. Safe to call when never joined.
  static void leave(JavaThread* current);

  // Starts a VM-internal daemon of the node (hidden, like the monitor
  // deflation thread: no program's), running entry.
  static void start_daemon(JavaThread* current, const char* name,
                           void (*entry)(JavaThread*, JavaThread*));

  static bool is_member() { return _tm != NULL; }
  // The VM is exiting: the node has left or is leaving the cluster.
  static bool is_leaving() { return _leaving; }
  // After leave() the VM is on its way to halt. A Java thread that still
  // reaches the cluster then (a daemon thread; a thread blocked in a shared
  // wait when System.exit came from another node) stops here until the halt,
  // as threads of a halting java simply stop: it neither fails nor touches
  // copies nobody keeps coherent. Returns at once while the node is a member.
  static void stop_if_left(JavaThread* current);
  // A server of the cluster this node needs (a sos-server shard, its
  // monitor service) is gone while the node is a member: no shared object
  // can be kept coherent any more. The process says so once on stderr,
  // naming the server (why), and ends with status 1, as a launcher that
  // loses the thread manager does (djava.runtime.Launcher); other threads
  // that meet the loss meanwhile stop here. Returns at once while leaving.
  static void cluster_lost(JavaThread* current, const char* why);
  // Whether current is the thread that left (the one ending the VM: main in
  // destroy_vm, or System.exit's caller; before_exit runs once): it
  // still runs the VM's last steps, which may touch a shared object of its
  // own (ensure_join locks main's Thread, shared once the program's thread
  // group is). For it, a shared object's monitor is its own from then on
  // (DsoMonitors): nobody else can contend for it any more.
  static bool has_left(JavaThread* current) { return _leaving && _leaving_thread == current; }
  // A thread server (-XX:DjavaThreadServer=N) runs threads of programs; a
  // launcher runs one program of its own.
  static bool is_thread_server();
  static djava_tm_client* tm() { return _tm; }
  // "host:pid", for messages.
  static const char* node_name() { return _node_name; }
  static uint64_t program() { return _program; }
  static djava_sos_client* sos() { return _sos; }
  // This node's number in the cluster (the top bits of the ids it makes).
  static uint32_t node_number() { return _node_number; }
  static const DsoNodeLibrary& lib() { return _lib; }

  // Calls static method `method` (`signature`, returning an object) of
  // `klass` (internal name), a class of djava.runtime (jvm/classes, on the
  // boot class path): the Java halves of what a node makes again of a
  // value that arrived by name (a lambda's or proxy's class, a handle).
  static oop call_runtime(const char* klass, const char* method, const char* signature,
                          JavaCallArguments* args, TRAPS);

 private:
  static void load_library();
  static void start_launcher(JavaThread* current);
  static void name_heap_exhaustion(JavaThread* current);
  // Launcher, -XX:+PrintDistributedStatistics: the thread servers' part.
  static void print_server_statistics(JavaThread* current);
  static bool connect(const char* secret, const char* node_name, char* what, char* why,
                      size_t length);

  static DsoNodeLibrary _lib;
  static djava_tm_client* _tm;
  static djava_sos_client* _sos;
  static djava_monitor_client* _monitors;
  static uint64_t _program;
  static uint32_t _node_number;
  static char _node_name[300];
  static volatile bool _leaving;
  static volatile int _lost;  // cluster_lost ran
  static JavaThread* volatile _leaving_thread;
};

// Keeps the cache from letting go of handles while held: from looking a
// handle up until an entry names it (the cache releases only handles no
// entry names, djava_sos_unreferenced), or while a snapshot reads handles
// another program's end may forget (DsoStatistics). May be nested.
class DsoHandlesHeld : public StackObj {
 public:
  explicit DsoHandlesHeld(JavaThread* current);
  ~DsoHandlesHeld() { DsoNode::lib().djava_sos_unhold_handles(DsoNode::sos()); }  // never waits
};

#endif // SHARE_DSO_DSONODE_HPP
