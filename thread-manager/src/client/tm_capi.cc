// C ABI of the thread-manager client (include/djava/tm_client.h). Nothing
// may escape: every entry point catches everything. djava_tm_connect lives in
// tm_connect.cc (it needs the wire library).
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>

#include "djava/tm_client.h"
#include "tm_capi_internal.h"
#include "tm_client.h"

using djava::tm::TmClient;

namespace {
thread_local std::string tm_last_error;

int Result(const std::string& err) {
  if (err.empty()) return 0;
  tm_last_error = err;
  return -1;
}

template <typename F>
int Guard(djava_tm_client* c, F f) {
  if (c == nullptr || !c->impl) return Result("null thread-manager client");
  try {
    return f(c->impl.get());
  } catch (const std::exception& e) {
    return Result(std::string("internal error: ") + e.what());
  } catch (...) {
    return Result("internal error");
  }
}
// Hands `bytes` to the caller as a library-owned buffer with a NUL after
// them (djava_tm_buffer_free). 0, or -1 if memory is short.
int CopyOut(const std::string& bytes, djava_tm_buffer* out) {
  auto* p = static_cast<uint8_t*>(std::malloc(bytes.size() + 1));
  if (p == nullptr) return Result("out of memory for " + std::to_string(bytes.size()) + " bytes");
  std::memcpy(p, bytes.data(), bytes.size());
  p[bytes.size()] = 0;
  out->data = p;
  out->len = bytes.size();
  return 0;
}
}  // namespace

extern "C" {

void djava_tm_close(djava_tm_client* c) {
  try {
    delete c;
  } catch (...) {
  }
}

int djava_tm_register_program_sized(djava_tm_client* c, uint64_t program,
                                    const char* launch_node, const char* classpath,
                                    uint32_t processors, uint32_t launcher_processors,
                                    uint32_t* program_processors) {
  return Guard(c, [&](TmClient* t) {
    return Result(t->RegisterProgram(program, launch_node ? launch_node : "",
                                     classpath ? classpath : "", processors,
                                     launcher_processors, program_processors));
  });
}

int djava_tm_register_program(djava_tm_client* c, uint64_t program, const char* launch_node,
                              const char* classpath) {
  return djava_tm_register_program_sized(c, program, launch_node, classpath, 0, 1, nullptr);
}

int djava_tm_register_server(djava_tm_client* c, const char* name, uint32_t capacity,
                             uint64_t* server_id) {
  return Guard(c, [&](TmClient* t) {
    return Result(t->RegisterServer(name ? name : "", capacity, server_id));
  });
}

int djava_tm_sos_servers(djava_tm_client* c, char* buf, size_t len) {
  return Guard(c, [&](TmClient* t) {
    std::string all;
    for (const auto& s : t->SosServers()) all += (all.empty() ? "" : ",") + s;
    if (buf == nullptr || len <= all.size()) return Result("buffer too small");
    std::memcpy(buf, all.c_str(), all.size() + 1);
    return 0;
  });
}

int djava_tm_submit(djava_tm_client* c, uint64_t program, uint64_t thread, int daemon,
                    uint64_t inherited_locals) {
  return Guard(c, [&](TmClient* t) {
    return Result(t->Submit(program, thread, daemon != 0, inherited_locals));
  });
}

int djava_tm_watch(djava_tm_client* c, uint64_t program, uint64_t thread) {
  return Guard(c, [&](TmClient* t) { return Result(t->Watch(program, thread)); });
}

int djava_tm_thread_ended(djava_tm_client* c, uint64_t program, uint64_t thread,
                          int by_exception, const char* detail) {
  return Guard(c, [&](TmClient* t) {
    return Result(t->ThreadEnded(program, thread, by_exception != 0, detail ? detail : ""));
  });
}

int djava_tm_program_end(djava_tm_client* c, uint64_t program, const char* reason) {
  return Guard(c, [&](TmClient* t) { return Result(t->ProgramEnd(program, reason ? reason : "")); });
}

int djava_tm_next_event(djava_tm_client* c, djava_tm_event* ev, int64_t timeout_ms) {
  if (ev == nullptr) return Result("null event");
  return Guard(c, [&](TmClient* t) { return t->NextEvent(ev, timeout_ms); });
}

int djava_tm_thread_state(djava_tm_client* c, uint64_t program, uint64_t thread) {
  return Guard(c, [&](TmClient* t) { return t->ThreadState(program, thread); });
}

int djava_tm_wait_thread(djava_tm_client* c, uint64_t program, uint64_t thread,
                         int64_t timeout_ms) {
  return Guard(c, [&](TmClient* t) { return t->WaitThread(program, thread, timeout_ms); });
}

int djava_tm_fetch_resource(djava_tm_client* c, uint64_t program, const char* name,
                            int64_t timeout_ms, djava_tm_buffer* out) {
  if (out == nullptr) return Result("null output buffer");
  out->data = nullptr;
  out->len = 0;
  if (name == nullptr) return Result("null resource name");
  return Guard(c, [&](TmClient* t) {
    std::string data, error;
    int r = t->FetchResource(program, name, timeout_ms, &data, &error);
    if (r != DJAVA_TM_FETCH_FOUND) {
      tm_last_error = error;
      return r;
    }
    if (CopyOut(data, out) != 0) return static_cast<int>(DJAVA_TM_FETCH_ERROR);
    return static_cast<int>(DJAVA_TM_FETCH_FOUND);
  });
}

int djava_tm_answer_resource(djava_tm_client* c, uint64_t request_id, int found,
                             const void* bytes, size_t len, const char* error) {
  if (found && len > 0 && bytes == nullptr) return Result("null resource bytes");
  return Guard(c, [&](TmClient* t) {
    return Result(t->AnswerResource(request_id, found != 0, bytes, len, error ? error : ""));
  });
}

int djava_tm_console(djava_tm_client* c, uint64_t program, uint64_t thread, int stream,
                     const void* bytes, size_t len) {
  return Guard(c, [&](TmClient* t) { return Result(t->Console(program, thread, stream, bytes, len)); });
}

int djava_tm_unpark(djava_tm_client* c, uint64_t program, uint64_t thread, int interrupt) {
  return Guard(c, [&](TmClient* t) { return Result(t->Unpark(program, thread, interrupt != 0)); });
}

int djava_tm_query_thread_state(djava_tm_client* c, uint64_t program, uint64_t thread,
                                int64_t timeout_ms, int32_t* status) {
  return Guard(c, [&](TmClient* t) {
    return Result(t->QueryThreadState(program, thread, timeout_ms, status));
  });
}

int djava_tm_answer_thread_state(djava_tm_client* c, uint64_t request, uint64_t reply_to,
                                 int32_t status) {
  return Guard(c, [&](TmClient* t) {
    return Result(t->AnswerThreadState(request, reply_to, status));
  });
}

int djava_tm_query_thread_stack(djava_tm_client* c, uint64_t program, uint64_t thread,
                                int64_t timeout_ms, int32_t* status, djava_tm_buffer* stack) {
  if (stack == nullptr) return Result("null output buffer");
  stack->data = nullptr;
  stack->len = 0;
  return Guard(c, [&](TmClient* t) {
    std::string frames;
    std::string err = t->QueryThreadState(program, thread, timeout_ms, status, &frames);
    if (!err.empty()) return Result(err);
    return CopyOut(frames, stack);
  });
}

int djava_tm_answer_thread_stack(djava_tm_client* c, uint64_t request, uint64_t reply_to,
                                 int32_t status, const void* stack, size_t len) {
  if (stack == nullptr && len > 0) return Result("null stack trace");
  return Guard(c, [&](TmClient* t) {
    return Result(t->AnswerThreadState(
        request, reply_to, status,
        std::string(static_cast<const char*>(stack == nullptr ? "" : stack), len)));
  });
}

int djava_tm_program_exit(djava_tm_client* c, uint64_t program, int32_t status,
                          const char* detail) {
  return Guard(c, [&](TmClient* t) {
    return Result(t->ProgramExit(program, status, detail ? detail : ""));
  });
}

int djava_tm_gather_statistics(djava_tm_client* c, uint64_t program, int64_t timeout_ms,
                               djava_tm_buffer* out) {
  if (out == nullptr) return Result("null output buffer");
  out->data = nullptr;
  out->len = 0;
  return Guard(c, [&](TmClient* t) {
    std::string text;
    std::string err = t->GatherStatistics(program, timeout_ms, &text);
    if (!err.empty()) return Result(err);
    return CopyOut(text, out);
  });
}

int djava_tm_answer_statistics(djava_tm_client* c, uint64_t request_id, const char* text,
                               size_t len) {
  if (text == nullptr && len > 0) return Result("null statistics text");
  return Guard(c, [&](TmClient* t) {
    return Result(t->AnswerStatistics(request_id, text == nullptr ? "" : text, len));
  });
}

void djava_tm_buffer_free(djava_tm_buffer* b) {
  if (b == nullptr) return;
  std::free(b->data);
  b->data = nullptr;
  b->len = 0;
}

void djava_tm_pause_heartbeats(djava_tm_client* c, int paused) {
  Guard(c, [&](TmClient* t) {
    t->PauseHeartbeats(paused != 0);
    return 0;
  });
}

const char* djava_tm_last_error(void) { return tm_last_error.c_str(); }

}  // extern "C"
