/*
 * djava: joining and leaving the cluster (see dsoNode.hpp).
 */

#include "precompiled.hpp"
#include "oops/oop.inline.hpp"
#include "dso/dsoClassInit.hpp"
#include "dso/dsoFence.hpp"
#include "dso/dsoGlobals.hpp"
#include "dso/dsoHeap.hpp"
#include "dso/dsoInterpreter.hpp"
#include "dso/dsoMonitors.hpp"
#include "dso/dsoProcessors.hpp"
#include "dso/dsoReclaim.hpp"
#include "dso/dsoThreads.hpp"
#include "dso/dsoReplicaTable.hpp"
#include "dso/dsoStatistics.hpp"
#include "dso/dsoSynchronizers.hpp"
#include "utilities/ostream.hpp"
#include "classfile/javaClasses.inline.hpp"
#include "classfile/symbolTable.hpp"
#include "classfile/systemDictionary.hpp"
#include "classfile/vmClasses.hpp"
#include "classfile/vmSymbols.hpp"
#include "runtime/handles.inline.hpp"
#include "runtime/javaCalls.hpp"
#include "dso/dsoNode.hpp"
#include "logging/log.hpp"
#include "runtime/arguments.hpp"
#include "runtime/atomic.hpp"
#include "runtime/flags/jvmFlag.hpp"
#include "runtime/globals_extension.hpp"
#include "runtime/interfaceSupport.inline.hpp"
#include "runtime/java.hpp"
#include "gc/shared/collectedHeap.hpp"
#include "memory/universe.hpp"
#include "runtime/os.hpp"
#include "utilities/defaultStream.hpp"
#include "utilities/ostream.hpp"

#include <fcntl.h>
#include <unistd.h>

DsoNodeLibrary DsoNode::_lib;
djava_tm_client* DsoNode::_tm = NULL;
djava_sos_client* DsoNode::_sos = NULL;
djava_monitor_client* DsoNode::_monitors = NULL;
uint64_t DsoNode::_program = 0;
uint32_t DsoNode::_node_number = 0;
char DsoNode::_node_name[300] = "";
volatile bool DsoNode::_leaving = false;
volatile int DsoNode::_lost = 0;
JavaThread* volatile DsoNode::_leaving_thread = NULL;

bool DsoNode::is_thread_server() {
  return DjavaThreadServer > 0;
}

static const size_t error_length = 1024;

// Ends the VM during start-up with "djava: WHAT: WHY".
static void fail_join(const char* what, const char* why) {
  char message[error_length];
  jio_snprintf(message, sizeof(message), "djava: %s", what);
  vm_exit_during_initialization(message, why);
}

void DsoNode::load_library() {
  char path[JVM_MAXPATHLEN];
  if (DjavaNodeLibrary != NULL) {
    jio_snprintf(path, sizeof(path), "%s", DjavaNodeLibrary);
  } else {
    jio_snprintf(path, sizeof(path), "%s/lib/libdjava_node.so", Arguments::get_java_home());
  }
  // The node library links UCX (wire/ucx_channel.h), whose libucs takes
  // SIGSEGV, SIGBUS, SIGILL, SIGFPE and SIGHUP as it loads unless told not
  // to: those are the VM's (implicit null checks, safepoint polls, shutdown
  // on SIGHUP). Its memory hooks are not wanted in a VM's heap either.
  ::setenv("UCX_HANDLE_ERRORS", "none", 1);
  ::setenv("UCX_ERROR_SIGNALS", "", 1);
  ::setenv("UCX_DEBUG_SIGNO", "0", 1);
  ::setenv("UCX_MEM_EVENTS", "no", 0);
  if (DjavaTransport != NULL) {
    if (strcmp(DjavaTransport, "auto") != 0 && strcmp(DjavaTransport, "ucx") != 0 &&
        strcmp(DjavaTransport, "tcp") != 0) {
      fail_join("-XX:DjavaTransport takes auto, ucx or tcp", DjavaTransport);
    }
    // The node library's connections read it (wire/ucx_channel.h).
    ::setenv("DJAVA_TRANSPORT", DjavaTransport, 1);
  }
  char error[error_length];
  void* handle = os::dll_load(path, error, sizeof(error));
  if (handle == NULL) {
    fail_join("cannot load the node library", error);
  }
#define DSO_NODE_RESOLVE(name)                                                 \
  _lib.name = reinterpret_cast<decltype(&::name)>(os::dll_lookup(handle, #name)); \
  if (_lib.name == NULL) {                                           \
    jio_snprintf(error, sizeof(error), "%s has no function %s (built from other sources?)", \
                 path, #name);                                                \
    fail_join("cannot load the node library", error);                         \
  }
  DSO_NODE_FUNCTIONS(DSO_NODE_RESOLVE)
#undef DSO_NODE_RESOLVE
  uint32_t version = _lib.djava_node_abi_version();
  if (version != DsoNode::abi_version) {
    jio_snprintf(error, sizeof(error), "%s has interface version %u, this VM needs %u",
                 path, version, DsoNode::abi_version);
    fail_join("cannot load the node library", error);
  }
  log_debug(dso)("loaded %s", path);
}

// Program ids are chosen by the launcher and must not collide with any
// other program the thread manager serves: 64 random bits.
static uint64_t random_program_id() {
  uint64_t id = 0;
  int fd = ::open("/dev/urandom", O_RDONLY | O_CLOEXEC);
  if (fd >= 0) {
    ssize_t n = ::read(fd, &id, sizeof(id));
    ::close(fd);
    if (n != (ssize_t)sizeof(id)) id = 0;
  }
  return id;  // 0: no randomness to be had
}

static const char* secret_file(char* buffer, size_t length) {
  if (DjavaSecretFile != NULL) return DjavaSecretFile;
  const char* from_env = ::getenv("DJAVA_SECRET_FILE");
  if (from_env != NULL && from_env[0] != '\0') return from_env;
  const char* home = ::getenv("HOME");
  jio_snprintf(buffer, length, "%s/.djava/cluster/secret", home != NULL ? home : "");
  return buffer;
}

// Connects to the thread manager, registers the program and connects to the
// sos-servers it names. False with `what` and `why` set on failure.
// The monitor client's mark source (djava_monitor_set_mark_source).
static uint64_t exclusive_mark(void* sos) {
  return DsoNode::lib().djava_sos_exclusive_mark((djava_sos_client*)sos);
}

// The monitor client's hand-over (djava_monitor_set_hand_over): a release
// kept back a moment hands over as its exit would have
// (DsoMonitors::hand_over_before_release), from the client's own thread: a
// synchronizer's only the JDK's objects, as SharedSynchronizers' exit.
static size_t hand_over(void* sos, uint64_t monitor, uint64_t since, uint64_t program,
                        uint64_t* out, size_t max) {
  const uint32_t flags =
      DsoSynchronizers::is_synchronizer_monitor(monitor) ? DJAVA_SOS_HAND_OVER_JDK_ONLY : 0;
  return DsoNode::lib().djava_sos_hand_over((djava_sos_client*)sos, since, program, flags, out,
                                            max);
}

bool DsoNode::connect(const char* secret, const char* node_name, char* what, char* why,
                      size_t length) {
  _tm = _lib.djava_tm_connect(DjavaCluster, secret, why, length);
  if (_tm == NULL) {
    jio_snprintf(what, length, "cannot join the cluster at %s", DjavaCluster);
    return false;
  }
  char sos_servers[4096] = "";
  if (is_thread_server()) {
    uint64_t server_id = 0;
    if (_lib.djava_tm_register_server(_tm, node_name, (uint32_t)DjavaThreadServer, &server_id) != 0) {
      jio_snprintf(what, length, "the thread manager at %s refused this thread server", DjavaCluster);
      jio_snprintf(why, length, "%s", _lib.djava_tm_last_error());
      return false;
    }
  } else {
    _program = random_program_id();
    if (_program == 0) {
      jio_snprintf(what, length, "cannot choose a program id");
      jio_snprintf(why, length, "reading /dev/urandom failed");
      return false;
    }
    const char* classpath = Arguments::get_appclasspath();
    // The program sees the processors of the cluster, the same on every
    // node (DsoProcessors); -XX:ActiveProcessorCount overrides them.
    uint32_t requested = FLAG_IS_DEFAULT(ActiveProcessorCount) || ActiveProcessorCount <= 0
                             ? 0 : (uint32_t)ActiveProcessorCount;
    uint32_t processors = 0;
    if (_lib.djava_tm_register_program_sized(_tm, _program, node_name,
                                             classpath != NULL ? classpath : "", requested,
                                             (uint32_t)os::active_processor_count(),
                                             &processors) != 0) {
      jio_snprintf(what, length, "the thread manager at %s refused this program", DjavaCluster);
      jio_snprintf(why, length, "%s", _lib.djava_tm_last_error());
      return false;
    }
    DsoProcessors::set(_program, (int)processors);
  }
  if (_lib.djava_tm_sos_servers(_tm, sos_servers, sizeof(sos_servers)) != 0) {
    jio_snprintf(what, length, "the thread manager at %s", DjavaCluster);
    jio_snprintf(why, length, "%s", _lib.djava_tm_last_error());
    return false;
  }
  if (sos_servers[0] == '\0') {
    jio_snprintf(what, length, "the thread manager at %s", DjavaCluster);
    jio_snprintf(why, length, "named no sos-server");
    return false;
  }
  // The cache connects to every shard of the directory, in the cluster's
  // order; the first numbers this node.
  djava_sos_config config = { sos_servers, secret, node_name, DsoHeap::callbacks() };
  djava_sos_error sos_error;
  if (_lib.djava_sos_connect(&config, &_sos, &sos_error) != DJAVA_SOS_OK) {
    jio_snprintf(what, length, "cannot join the sos-servers %s", sos_servers);
    jio_snprintf(why, length, "%s", sos_error.message);
    return false;
  }
  _node_number = _lib.djava_sos_node(_sos);
  DsoHeap::set_client(_sos);
  _monitors = _lib.djava_monitor_connect(sos_servers, secret, _node_number, why, length);
  if (_monitors == NULL) {
    jio_snprintf(what, length, "cannot reach the monitor service at %s", sos_servers);
    return false;
  }
  DsoMonitors::set_client(_monitors);
  // A monitor's tenure begins at a mark of this node's exclusive chunks, so
  // that what its holder took meanwhile can leave with the release.
  _lib.djava_monitor_set_mark_source(_monitors, exclusive_mark, _sos);
  if (DjavaMonitorLinger) {
    _lib.djava_monitor_set_hand_over(_monitors, hand_over, _sos);
  }
  if (is_thread_server()) {
    log_info(dso)("joined the cluster at %s as thread server %s (sos node %u) for %u threads, "
                  "sos-servers %s", DjavaCluster, node_name, _node_number,
                  (uint)DjavaThreadServer, sos_servers);
  } else {
    log_info(dso)("joined the cluster at %s as node %s (sos node %u), program %" PRIu64
                  " with %d processors, sos-servers %s", DjavaCluster, node_name, _node_number,
                  _program, DsoProcessors::of(_program), sos_servers);
  }
  return true;
}

void DsoNode::join(JavaThread* current) {
  if (DjavaCluster == NULL || DjavaCluster[0] == '\0') {
    fail_join("-XX:+DistributedJava needs the cluster's address",
              "give -XX:DjavaCluster=host:port (the thread manager); build/bin/djava "
              "does so from DJAVA_CLUSTER");
  }
  load_library();

  char secret_buffer[JVM_MAXPATHLEN];
  const char* secret = secret_file(secret_buffer, sizeof(secret_buffer));
  char host[256] = "?";
  os::get_host_name(host, sizeof(host));
  char* node_name = _node_name;
  jio_snprintf(_node_name, sizeof(_node_name), "%s:%d", host, os::current_process_id());
  char what[error_length] = "";
  char why[error_length] = "";
  DsoInterpreter::initialize();  // before the cache can call it back
  DsoHeap::prepare_cache_thread(current);
  bool joined;
  {
    // Network round trips: safepoints and GC proceed meanwhile.
    ThreadToNativeFromVM in_native(current);
    joined = connect(secret, node_name, what, why, sizeof(what));
  }
  if (!joined) {
    fail_join(what, why);
  }
  DsoThreads::initialize();
  DsoFence::start(current);
  DsoReclaim::start(current);
  DsoClassInit::start(current);
  name_heap_exhaustion(current);
  if (!is_thread_server()) {
    start_launcher(current);
  }
}

// A program's OutOfMemoryError may come from any of its nodes, and each
// has a heap of its own: the message says which ran out, and how much it
// had (java's own words first).
void DsoNode::name_heap_exhaustion(JavaThread* current) {
  JavaThread* THREAD = current;
  HandleMark hm(current);
  stringStream message;
  message.print("Java heap space (djava %s %s, maximum heap " SIZE_FORMAT " MB)",
                is_thread_server() ? "thread server" : "launcher", _node_name,
                Universe::heap()->max_capacity() / M);
  oop text = java_lang_String::create_oop_from_str(message.as_string(), THREAD);
  if (HAS_PENDING_EXCEPTION) {
    CLEAR_PENDING_EXCEPTION;  // java's words stay
    return;
  }
  Universe::set_out_of_memory_error_java_heap_message(text);
}

oop DsoNode::call_runtime(const char* klass, const char* method, const char* signature,
                          JavaCallArguments* args, TRAPS) {
  TempNewSymbol klass_name = SymbolTable::new_symbol(klass);
  TempNewSymbol method_name = SymbolTable::new_symbol(method);
  TempNewSymbol signature_name = SymbolTable::new_symbol(signature);
  Klass* k = SystemDictionary::resolve_or_fail(klass_name, Handle(), Handle(), true, CHECK_NULL);
  JavaValue result(T_OBJECT);
  JavaCalls::call_static(&result, k, method_name, signature_name, args, CHECK_NULL);
  return result.get_oop();
}

// The launcher's side of its remote threads (djava.runtime.Launcher): their
// console output, the class files they need, System.exit from afar.
void DsoNode::start_launcher(JavaThread* current) {
  JavaThread* THREAD = current;
  HandleMark hm(current);
  TempNewSymbol name = SymbolTable::new_symbol("djava/runtime/Launcher");
  Klass* k = SystemDictionary::resolve_or_fail(name, true, THREAD);
  if (!HAS_PENDING_EXCEPTION) {
    JavaValue result(T_VOID);
    TempNewSymbol start = SymbolTable::new_symbol("start");
    JavaCalls::call_static(&result, k, start, vmSymbols::void_method_signature(), THREAD);
  }
  if (HAS_PENDING_EXCEPTION) {
    Handle ex(current, PENDING_EXCEPTION);
    CLEAR_PENDING_EXCEPTION;
    vm_exit_during_initialization(ex);
  }
}

void DsoNode::stop_if_left(JavaThread* current) {
  if (!_leaving) {
    return;
  }
  ThreadToNativeFromVM in_native(current);
  for (;;) {
    os::naked_short_sleep(1000);
  }
}

void DsoNode::cluster_lost(JavaThread* current, const char* why) {
  if (_leaving) {
    return;
  }
  if (Atomic::cmpxchg(&_lost, 0, 1) != 0) {
    // Another thread reports the loss and ends the VM.
    ThreadToNativeFromVM in_native(current);
    for (;;) {
      os::naked_short_sleep(1000);
    }
  }
  if (is_thread_server()) {
    jio_fprintf(defaultStream::error_stream(), "thread-server %s: the cluster is gone: %s\n",
                _node_name, why);
  } else {
    jio_fprintf(defaultStream::error_stream(), "djava: lost the cluster: %s\n", why);
  }
  // As Runtime.halt: the program cannot go on, and its shutdown hooks
  // would only meet the same loss.
  before_exit(current, true);
  vm_exit(1);
}

// The launcher's statistics are only part of the story: the program's
// threads ran on thread servers, which answer through the thread manager
// (whatever their own flags; no shared filesystem or log is assumed).
void DsoNode::print_server_statistics(JavaThread* current) {
  djava_tm_buffer text = { NULL, 0 };
  int rc;
  {
    ThreadToNativeFromVM in_native(current);
    // The manager answers within its own 3 s limit even if a server does not.
    rc = _lib.djava_tm_gather_statistics(_tm, _program, 10000, &text);
  }
  if (rc != 0) {
    tty->print_cr("djava statistics of the thread servers: none (%s)", _lib.djava_tm_last_error());
  } else {
    tty->write((const char*)text.data, text.len);
  }
  tty->flush();
  _lib.djava_tm_buffer_free(&text);
}

void DsoNode::leave(JavaThread* current) {
  if (!is_member() || _leaving) return;
  _leaving_thread = current;
  _leaving = true;
  if (_sos != NULL && PrintDistributedStatistics) {
    DsoStatistics::print(current, tty, is_thread_server() ? 0 : _program, "");
    if (!is_thread_server()) {
      print_server_statistics(current);
    }
  }
  ThreadToNativeFromVM in_native(current);
  if (!is_thread_server() &&
      _lib.djava_tm_program_end(_tm, _program, "the launching JVM exited") != 0) {
    log_warning(dso)("reporting the program's end: %s", _lib.djava_tm_last_error());
  }
  // The clients stay allocated (disconnect, sos leave): other Java threads
  // run until the halt and may be inside them or about to call them; their
  // calls fail from now on and stop_if_left holds those threads.
  if (_monitors != NULL) {
    _lib.djava_monitor_disconnect(_monitors);
  }
  if (_sos != NULL) {
    djava_sos_error sos_error;
    if (_lib.djava_sos_leave(_sos, &sos_error) != DJAVA_SOS_OK) {
      log_warning(dso)("leaving the sos-server: %s: %s",
                       _lib.djava_sos_status_name(sos_error.status), sos_error.message);
    }
  }
  // The thread-manager client stays open until the process ends: the event
  // pump (djava.runtime.Launcher, ThreadServer) may be blocked in it, and
  // the manager has been told already (program end) or learns from the
  // closed connection (a thread server).
  log_info(dso)("left the cluster at %s", DjavaCluster);
}

DsoHandlesHeld::DsoHandlesHeld(JavaThread* current) {
  ThreadToNativeFromVM in_native(current);  // may wait a moment for a free or release in progress
  DsoNode::lib().djava_sos_hold_handles(DsoNode::sos());
}

namespace {

class DsoDaemonThread : public JavaThread {
 public:
  explicit DsoDaemonThread(ThreadFunction entry) : JavaThread(entry) {}
  bool is_hidden_from_external_view() const { return true; }
};

}  // namespace

void DsoNode::start_daemon(JavaThread* current, const char* name,
                           void (*entry)(JavaThread*, JavaThread*)) {
  JavaThread* THREAD = current;  // for the exception macros
  HandleMark hm(current);
  Handle name_string = java_lang_String::create_from_str(name, CHECK);
  Handle group(current, Universe::system_thread_group());
  Handle thread_oop = JavaCalls::construct_new_instance(vmClasses::Thread_klass(),
                                                        vmSymbols::threadgroup_string_void_signature(),
                                                        group, name_string, CHECK);
  DsoDaemonThread* thread = new DsoDaemonThread(entry);
  JavaThread::vm_exit_on_osthread_failure(thread);
  JavaThread::start_internal_daemon(current, thread, thread_oop, NearMaxPriority);
}
