#include "tm_client.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>

namespace djava {
namespace tm {

namespace {

void Copy(char* dst, size_t n, const std::string& s) {
  size_t k = s.size() < n - 1 ? s.size() : n - 1;
  std::memcpy(dst, s.data(), k);
  dst[k] = '\0';
}

// A library-owned copy of `s` for the caller (djava_tm_buffer_free), with a
// NUL after it. {NULL, 0} if memory is short.
djava_tm_buffer MakeBuffer(const std::string& s) {
  djava_tm_buffer b{nullptr, 0};
  auto* p = static_cast<uint8_t*>(std::malloc(s.size() + 1));
  if (p == nullptr) return b;
  std::memcpy(p, s.data(), s.size());
  p[s.size()] = 0;
  b.data = p;
  b.len = s.size();
  return b;
}

// Error texts travel in the answer next to the data: keep them small.
constexpr size_t kMaxErrorText = 4096;

bool Terminal(int state) {
  return state == DJAVA_TM_ENDED || state == DJAVA_TM_ENDED_BY_EXCEPTION ||
         state == DJAVA_TM_FAILED;
}

}  // namespace

TmClient::TmClient(std::unique_ptr<Channel> channel) : channel_(std::move(channel)) {
  reader_ = std::thread([this] { ReaderLoop(); });
}

TmClient::~TmClient() {
  Close();
  reader_.join();
  if (heartbeat_.joinable()) heartbeat_.join();
  for (auto& ev : events_) std::free(ev.data.data);
}

void TmClient::Close() {
  {
    std::lock_guard<std::mutex> l(mu_);
    stop_ = true;
    cv_.notify_all();
  }
  channel_->Shutdown();
}

std::string TmClient::SendRaw(const tmpb::TmClientMessage& m) {
  if (!channel_->Send(m)) return "thread manager connection lost: " + channel_->Error();
  return "";
}

std::string TmClient::SendLocked(const tmpb::TmClientMessage& m) {
  if (closed_) return io_error_;
  std::lock_guard<std::mutex> s(send_mu_);
  return SendRaw(m);
}

std::string TmClient::SendUnlocked(const tmpb::TmClientMessage& m) {
  {
    std::lock_guard<std::mutex> l(mu_);
    if (closed_) return io_error_;
  }
  std::lock_guard<std::mutex> s(send_mu_);
  return SendRaw(m);
}

std::string TmClient::Register(const tmpb::TmClientMessage& m) {
  std::unique_lock<std::mutex> l(mu_);
  int regs = registrations_, errs = errors_;
  std::string err = SendLocked(m);
  if (!err.empty()) return err;
  cv_.wait(l, [&] { return registrations_ > regs || errors_ > errs || closed_; });
  if (registrations_ > regs) return "";
  return closed_ && errors_ == errs ? io_error_ : last_reply_error_;
}

std::string TmClient::RegisterProgram(uint64_t program, const std::string& node,
                                      const std::string& cp, uint32_t processors,
                                      uint32_t launcher_processors, uint32_t* answer) {
  tmpb::TmClientMessage m;
  auto* r = m.mutable_register_program();
  r->set_program(program);
  r->set_launch_node(node);
  r->set_classpath(cp);
  r->set_processors(processors);
  r->set_launcher_processors(launcher_processors);
  std::string err = Register(m);
  if (err.empty() && answer != nullptr) {
    std::lock_guard<std::mutex> l(mu_);
    *answer = processors_;
  }
  return err;
}

std::string TmClient::RegisterServer(const std::string& name, uint32_t capacity, uint64_t* id) {
  tmpb::TmClientMessage m;
  m.mutable_register_server()->set_name(name);
  m.mutable_register_server()->set_capacity(capacity);
  std::string err = Register(m);
  if (!err.empty()) return err;
  // The manager declares a server dead if it misses its liveness deadline.
  heartbeat_ = std::thread([this] { HeartbeatLoop(); });
  if (id) {
    std::lock_guard<std::mutex> l(mu_);
    *id = server_id_;
  }
  return "";
}

std::vector<std::string> TmClient::SosServers() {
  std::lock_guard<std::mutex> l(mu_);
  return sos_servers_;
}

std::string TmClient::Submit(uint64_t program, uint64_t thread, bool daemon,
                             uint64_t inherited_locals) {
  tmpb::TmClientMessage m;
  m.mutable_submit()->set_program(program);
  m.mutable_submit()->set_thread(thread);
  m.mutable_submit()->set_daemon(daemon);
  m.mutable_submit()->set_inherited_locals(inherited_locals);
  std::lock_guard<std::mutex> l(mu_);
  return SendLocked(m);
}

std::string TmClient::Watch(uint64_t program, uint64_t thread) {
  tmpb::TmClientMessage m;
  m.mutable_watch()->set_program(program);
  m.mutable_watch()->set_thread(thread);
  std::lock_guard<std::mutex> l(mu_);
  return SendLocked(m);
}

std::string TmClient::ThreadEnded(uint64_t program, uint64_t thread, bool by_exception,
                                  const std::string& detail) {
  tmpb::TmClientMessage m;
  auto* e = m.mutable_thread_ended();
  e->set_program(program);
  e->set_thread(thread);
  e->set_by_exception(by_exception);
  e->set_detail(detail);
  std::lock_guard<std::mutex> l(mu_);
  return SendLocked(m);
}

std::string TmClient::ProgramEnd(uint64_t program, const std::string& reason) {
  tmpb::TmClientMessage m;
  m.mutable_program_end()->set_program(program);
  m.mutable_program_end()->set_reason(reason);
  std::lock_guard<std::mutex> l(mu_);
  return SendLocked(m);
}

int TmClient::FetchResource(uint64_t program, const std::string& name, int64_t timeout_ms,
                            std::string* data, std::string* error) {
  const std::string what = "resource '" + name + "' of program " + std::to_string(program);
  Fetch f;
  uint64_t id;
  {
    std::lock_guard<std::mutex> l(mu_);
    if (closed_ || stop_) {
      *error = closed_ ? io_error_ : "thread manager client closed";
      return DJAVA_TM_FETCH_ERROR;
    }
    id = ++last_fetch_;
    fetches_[id] = &f;
  }
  tmpb::TmClientMessage m;
  auto* r = m.mutable_fetch_resource();
  r->set_program(program);
  r->set_request(id);
  r->set_name(name);
  std::string err = SendUnlocked(m);
  std::unique_lock<std::mutex> l(mu_);
  if (!err.empty()) {
    fetches_.erase(id);
    *error = what + ": " + err;
    return DJAVA_TM_FETCH_ERROR;
  }
  auto done = [&] { return f.done || closed_ || stop_; };
  bool in_time = timeout_ms < 0 ? (cv_.wait(l, done), true)
                                : cv_.wait_for(l, std::chrono::milliseconds(timeout_ms), done);
  fetches_.erase(id);  // a late answer is then ignored
  if (f.done) {
    if (f.found) {
      *data = std::move(f.data);
      return DJAVA_TM_FETCH_FOUND;
    }
    if (f.error.empty()) {
      *error = what + ": not found";
      return DJAVA_TM_FETCH_NOT_FOUND;
    }
    *error = f.error;
    return DJAVA_TM_FETCH_ERROR;
  }
  if (!in_time) {
    *error = what + ": no answer within " + std::to_string(timeout_ms) + " ms";
    return DJAVA_TM_FETCH_TIMEOUT;
  }
  *error = what + ": " + (closed_ ? io_error_ : std::string("thread manager client closed"));
  return DJAVA_TM_FETCH_ERROR;
}

std::string TmClient::AnswerResource(uint64_t request, bool found, const void* data, size_t len,
                                     const std::string& error) {
  std::string what = "request " + std::to_string(request);
  {
    std::lock_guard<std::mutex> l(mu_);
    auto it = requests_.find(request);
    if (it != requests_.end()) {
      what = "resource '" + it->second + "'";
      requests_.erase(it);
    }
  }
  tmpb::TmClientMessage m;
  auto* r = m.mutable_resource_reply();
  r->set_request(request);
  std::string result;
  if (found && len > DJAVA_TM_MAX_RESOURCE_BYTES) {
    // It would not fit in a frame (the manager would drop this connection):
    // the requester gets an error naming the resource instead.
    result = what + " is " + std::to_string(len) + " bytes, more than the " +
             std::to_string(DJAVA_TM_MAX_RESOURCE_BYTES) + " an answer may carry";
    r->set_found(false);
    r->set_error(result);
  } else if (found) {
    r->set_found(true);
    if (len > 0) r->set_data(data, len);
  } else {
    r->set_found(false);
    r->set_error(error.size() <= kMaxErrorText ? error : error.substr(0, kMaxErrorText));
  }
  std::string err = SendUnlocked(m);
  return err.empty() ? result : err;
}

std::string TmClient::Console(uint64_t program, uint64_t thread, int stream, const void* data,
                              size_t len) {
  if (stream < DJAVA_TM_STREAM_OUT || stream > DJAVA_TM_STREAM_STDERR)
    return "console stream must be 1 (out), 2 (err), 3 (stdout) or 4 (stderr), not " +
           std::to_string(stream);
  if (len == 0) return "";
  if (data == nullptr) return "null console bytes";
  {
    std::lock_guard<std::mutex> l(mu_);
    if (closed_) return io_error_;
  }
  // One lock for all pieces: concurrent writers' pieces never interleave.
  std::lock_guard<std::mutex> s(send_mu_);
  const char* p = static_cast<const char*>(data);
  tmpb::TmClientMessage m;
  auto* o = m.mutable_console();
  o->set_program(program);
  o->set_thread(thread);
  o->set_stream(static_cast<uint32_t>(stream));
  for (size_t off = 0; off < len; off += kConsoleChunk) {
    o->set_data(p + off, std::min(kConsoleChunk, len - off));
    std::string err = SendRaw(m);
    if (!err.empty()) return err;
  }
  return "";
}

std::string TmClient::ProgramExit(uint64_t program, int32_t status, const std::string& detail) {
  tmpb::TmClientMessage m;
  auto* e = m.mutable_program_exit();
  e->set_program(program);
  e->set_status(status);
  e->set_detail(detail);
  std::lock_guard<std::mutex> l(mu_);
  return SendLocked(m);
}

std::string TmClient::Unpark(uint64_t program, uint64_t thread, bool interrupt) {
  tmpb::TmClientMessage m;
  auto* u = m.mutable_unpark();
  u->set_program(program);
  u->set_thread(thread);
  u->set_interrupt(interrupt);
  std::lock_guard<std::mutex> l(mu_);
  return SendLocked(m);
}

std::string TmClient::QueryThreadState(uint64_t program, uint64_t thread, int64_t timeout_ms,
                                       int32_t* status, std::string* stack) {
  StateQuery q;
  uint64_t id;
  {
    std::lock_guard<std::mutex> l(mu_);
    if (closed_ || stop_) return closed_ ? io_error_ : "thread manager client closed";
    id = ++last_fetch_;
    state_queries_[id] = &q;
  }
  tmpb::TmClientMessage m;
  auto* r = m.mutable_query_thread_state();
  r->set_program(program);
  r->set_thread(thread);
  r->set_request(id);
  r->set_stack_trace(stack != nullptr);
  std::string err = SendUnlocked(m);
  std::unique_lock<std::mutex> l(mu_);
  if (err.empty()) {
    cv_.wait_for(l, std::chrono::milliseconds(std::max<int64_t>(timeout_ms, 0)),
                 [&] { return q.done || closed_ || stop_; });
  }
  state_queries_.erase(id);  // a late answer is then ignored
  if (!err.empty()) return err;
  if (!q.done) return "no answer within " + std::to_string(timeout_ms) + " ms";
  *status = q.status;
  if (stack != nullptr) *stack = std::move(q.stack);
  return "";
}

std::string TmClient::AnswerThreadState(uint64_t request, uint64_t reply_to, int32_t status,
                                        const std::string& stack) {
  tmpb::TmClientMessage m;
  auto* a = m.mutable_thread_state_answer();
  a->set_request(request);
  a->set_reply_to(reply_to);
  a->set_status(status);
  a->set_stack_trace(stack);
  std::lock_guard<std::mutex> l(mu_);
  return SendLocked(m);
}

std::string TmClient::GatherStatistics(uint64_t program, int64_t timeout_ms,
                                       std::string* text) {
  const std::string what = "statistics of program " + std::to_string(program);
  Gather g;
  uint64_t id;
  {
    std::lock_guard<std::mutex> l(mu_);
    if (closed_ || stop_) return what + ": " + (closed_ ? io_error_ : "thread manager client closed");
    id = ++last_fetch_;
    gathers_[id] = &g;
  }
  tmpb::TmClientMessage m;
  m.mutable_gather_statistics()->set_program(program);
  m.mutable_gather_statistics()->set_request(id);
  std::string err = SendUnlocked(m);
  std::unique_lock<std::mutex> l(mu_);
  if (!err.empty()) {
    gathers_.erase(id);
    return what + ": " + err;
  }
  auto done = [&] { return g.done || closed_ || stop_; };
  bool in_time = timeout_ms < 0 ? (cv_.wait(l, done), true)
                                : cv_.wait_for(l, std::chrono::milliseconds(timeout_ms), done);
  gathers_.erase(id);  // a late answer is then ignored
  if (!g.done) {
    if (!in_time) return what + ": no answer within " + std::to_string(timeout_ms) + " ms";
    return what + ": " + (closed_ ? io_error_ : std::string("thread manager client closed"));
  }
  if (!g.answer.error().empty()) return g.answer.error();
  text->clear();
  for (const auto& s : g.answer.servers()) {
    if (s.error().empty()) {
      *text += s.text();
      if (!s.text().empty() && s.text().back() != '\n') *text += '\n';
    } else {
      *text += "djava statistics of thread server '" + s.server_name() + "': none (" +
               s.error() + ")\n";
    }
  }
  return "";
}

std::string TmClient::AnswerStatistics(uint64_t request, const char* text, size_t len) {
  tmpb::TmClientMessage m;
  auto* r = m.mutable_statistics_reply();
  r->set_request(request);
  // The manager would cut it anyway; a frame must never outgrow the limit.
  r->set_text(text, std::min(len, DJAVA_TM_MAX_STATISTICS_BYTES + 1));
  return SendUnlocked(m);
}

int TmClient::NextEvent(djava_tm_event* ev, int64_t timeout_ms) {
  std::unique_lock<std::mutex> l(mu_);
  auto ready = [&] { return !events_.empty() || closed_ || stop_; };
  if (timeout_ms < 0) {
    cv_.wait(l, ready);
  } else if (!cv_.wait_for(l, std::chrono::milliseconds(timeout_ms), ready)) {
    return 0;
  }
  if (events_.empty()) return -1;
  *ev = events_.front();
  events_.pop_front();
  return 1;
}

int TmClient::ThreadState(uint64_t program, uint64_t thread) {
  std::lock_guard<std::mutex> l(mu_);
  auto it = states_.find({program, thread});
  return it == states_.end() ? 0 : it->second;
}

int TmClient::WaitThread(uint64_t program, uint64_t thread, int64_t timeout_ms) {
  if (!Watch(program, thread).empty()) return -1;
  std::unique_lock<std::mutex> l(mu_);
  auto done = [&] {
    auto it = states_.find({program, thread});
    return (it != states_.end() && Terminal(it->second)) || failed_programs_.count(program) ||
           closed_;
  };
  bool ok = timeout_ms < 0 ? (cv_.wait(l, done), true)
                           : cv_.wait_for(l, std::chrono::milliseconds(timeout_ms), done);
  if (!ok) return 0;
  auto it = states_.find({program, thread});
  if (it != states_.end() && Terminal(it->second)) return it->second;
  if (failed_programs_.count(program)) return DJAVA_TM_FAILED;
  return -1;
}

void TmClient::PauseHeartbeats(bool paused) {
  std::lock_guard<std::mutex> l(mu_);
  heartbeat_paused_ = paused;
}

void TmClient::HeartbeatLoop() {
  std::unique_lock<std::mutex> l(mu_);
  while (!stop_ && !closed_) {
    cv_.wait_for(l, std::chrono::milliseconds(heartbeat_ms_), [&] { return stop_ || closed_; });
    if (stop_ || closed_) break;
    if (heartbeat_paused_) continue;
    tmpb::TmClientMessage m;
    m.mutable_heartbeat();
    // Not under mu_: a long send (a resource answer) must not stall the reader.
    l.unlock();
    SendUnlocked(m);
    l.lock();
  }
}

void TmClient::ReaderLoop() {
  tmpb::TmServerMessage m;
  while (channel_->Receive(&m)) {
    std::lock_guard<std::mutex> l(mu_);
    djava_tm_event ev;
    std::memset(&ev, 0, sizeof ev);
    switch (m.body_case()) {
      case tmpb::TmServerMessage::kRegistered:
        sos_servers_.assign(m.registered().sos_servers().begin(),
                            m.registered().sos_servers().end());
        if (m.registered().heartbeat_interval_ms() > 0)
          heartbeat_ms_ = m.registered().heartbeat_interval_ms();
        if (m.registered().server_id() != 0) server_id_ = m.registered().server_id();
        processors_ = m.registered().processors();
        registrations_++;
        cv_.notify_all();
        m.Clear();
        continue;
      case tmpb::TmServerMessage::kAssign:
        ev.kind = DJAVA_TM_EV_ASSIGN;
        ev.program = m.assign().program();
        ev.thread = m.assign().thread();
        Copy(ev.classpath, sizeof ev.classpath, m.assign().classpath());
        Copy(ev.launch_node, sizeof ev.launch_node, m.assign().launch_node());
        ev.processors = m.assign().processors();
        ev.inherited_locals = m.assign().inherited_locals();
        break;
      case tmpb::TmServerMessage::kState:
        ev.kind = DJAVA_TM_EV_STATE;
        ev.program = m.state().program();
        ev.thread = m.state().thread();
        ev.state = m.state().state();
        ev.server_id = m.state().server_id();
        ev.live_non_daemon = m.state().live_non_daemon();
        Copy(ev.server_name, sizeof ev.server_name, m.state().server_name());
        Copy(ev.detail, sizeof ev.detail, m.state().detail());
        states_[{ev.program, ev.thread}] = ev.state;
        break;
      case tmpb::TmServerMessage::kProgramFailed:
        ev.kind = DJAVA_TM_EV_PROGRAM_FAILED;
        ev.program = m.program_failed().program();
        Copy(ev.detail, sizeof ev.detail, m.program_failed().reason());
        failed_programs_[ev.program] = m.program_failed().reason();
        break;
      case tmpb::TmServerMessage::kDropProgram:
        ev.kind = DJAVA_TM_EV_DROP_PROGRAM;
        ev.program = m.drop_program().program();
        break;
      case tmpb::TmServerMessage::kResourceRequest: {
        const auto& r = m.resource_request();
        ev.kind = DJAVA_TM_EV_RESOURCE_REQUEST;
        ev.program = r.program();
        ev.request_id = r.request();
        ev.data = MakeBuffer(r.name());
        Copy(ev.detail, sizeof ev.detail, r.name());
        requests_[r.request()] = r.name();
        break;
      }
      case tmpb::TmServerMessage::kResourceData: {
        // No event: the answer goes to the thread blocked in FetchResource
        // (none if it timed out meanwhile).
        auto* d = m.mutable_resource_data();
        auto it = fetches_.find(d->request());
        if (it != fetches_.end()) {
          Fetch* f = it->second;
          f->found = d->found();
          f->data = std::move(*d->mutable_data());
          f->error = d->error();
          f->done = true;
          cv_.notify_all();
        }
        m.Clear();
        continue;
      }
      case tmpb::TmServerMessage::kThreadStateData: {
        // No event: the answer goes to the thread blocked in QueryThreadState.
        auto it = state_queries_.find(m.thread_state_data().request());
        if (it != state_queries_.end()) {
          it->second->status = m.thread_state_data().status();
          it->second->stack = std::move(*m.mutable_thread_state_data()->mutable_stack_trace());
          it->second->done = true;
          cv_.notify_all();
        }
        m.Clear();
        continue;
      }
      case tmpb::TmServerMessage::kThreadStateQuery:
        ev.kind = DJAVA_TM_EV_STATE_QUERY;
        ev.program = m.thread_state_query().program();
        ev.thread = m.thread_state_query().thread();
        ev.request_id = m.thread_state_query().request();
        ev.reply_to = m.thread_state_query().reply_to();
        ev.status = m.thread_state_query().stack_trace() ? 1 : 0;
        break;
      case tmpb::TmServerMessage::kStatisticsRequest:
        ev.kind = DJAVA_TM_EV_STATISTICS_REQUEST;
        ev.program = m.statistics_request().program();
        ev.request_id = m.statistics_request().request();
        break;
      case tmpb::TmServerMessage::kStatisticsData: {
        // No event: the answer goes to the thread blocked in GatherStatistics.
        auto it = gathers_.find(m.statistics_data().request());
        if (it != gathers_.end()) {
          it->second->answer.Swap(m.mutable_statistics_data());
          it->second->done = true;
          cv_.notify_all();
        }
        m.Clear();
        continue;
      }
      case tmpb::TmServerMessage::kConsole:
        ev.kind = DJAVA_TM_EV_CONSOLE;
        ev.program = m.console().program();
        ev.thread = m.console().thread();
        ev.stream = static_cast<int>(m.console().stream());
        ev.data = MakeBuffer(m.console().data());
        break;
      case tmpb::TmServerMessage::kUnpark:
        ev.kind = DJAVA_TM_EV_UNPARK;
        ev.program = m.unpark().program();
        ev.thread = m.unpark().thread();
        ev.status = m.unpark().interrupt() ? 1 : 0;
        break;
      case tmpb::TmServerMessage::kProgramExit:
        ev.kind = DJAVA_TM_EV_EXIT;
        ev.program = m.program_exit().program();
        ev.status = m.program_exit().status();
        Copy(ev.detail, sizeof ev.detail, m.program_exit().detail());
        break;
      case tmpb::TmServerMessage::kError:
        ev.kind = DJAVA_TM_EV_ERROR;
        Copy(ev.detail, sizeof ev.detail, m.error().message());
        last_reply_error_ = m.error().message();
        errors_++;
        break;
      default:
        m.Clear();
        continue;
    }
    events_.push_back(ev);
    cv_.notify_all();
    m.Clear();
  }
  std::lock_guard<std::mutex> l(mu_);
  closed_ = true;
  io_error_ = "thread manager connection lost: " + channel_->Error();
  if (!stop_) {
    djava_tm_event ev;
    std::memset(&ev, 0, sizeof ev);
    ev.kind = DJAVA_TM_EV_DISCONNECTED;
    Copy(ev.detail, sizeof ev.detail, io_error_);
    events_.push_back(ev);
  }
  cv_.notify_all();
}

}  // namespace tm
}  // namespace djava
