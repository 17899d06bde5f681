#include "registry.h"

#include <algorithm>

namespace djava {
namespace tm {

const char* ThreadStateName(ThreadState s) {
  switch (s) {
    case ThreadState::kQueued: return "queued";
    case ThreadState::kRunning: return "running";
    case ThreadState::kEnded: return "ended";
    case ThreadState::kEndedByException: return "ended-by-exception";
    case ThreadState::kFailed: return "failed";
  }
  return "?";
}

static bool Finished(ThreadState s) {
  return s == ThreadState::kEnded || s == ThreadState::kEndedByException ||
         s == ThreadState::kFailed;
}

std::string ThreadRegistry::RegisterServer(ServerId id, const std::string& name,
                                           uint32_t capacity, TimeMs now,
                                           std::vector<Action>* out) {
  if (servers_.count(id)) return "server already registered";
  if (capacity == 0) return "capacity must be at least 1";
  Server& s = servers_[id];
  s.name = name;
  s.capacity = capacity;
  s.deadline = now + options_.liveness_timeout_ms;
  // A new server is the least recently assigned: it goes first among equals.
  s.last_assigned = 0;
  Dispatch(out);
  return "";
}

std::string ThreadRegistry::Heartbeat(ServerId id, TimeMs now) {
  auto it = servers_.find(id);
  if (it == servers_.end()) return "heartbeat from unregistered server";
  it->second.deadline = now + options_.liveness_timeout_ms;
  return "";
}

void ThreadRegistry::ServerGone(ServerId id, const std::string& why,
                                std::vector<Action>* out) {
  auto it = servers_.find(id);
  if (it == servers_.end()) return;
  Server server = std::move(it->second);
  servers_.erase(it);
  std::string reason = "thread server '" + server.name + "' (id " + std::to_string(id) +
                       ") " + why;
  // Every program that had a thread there may have lost heap data that lived
  // only in that server's cache: its threads fail and the program is failed.
  std::set<ProgramId> hit;
  for (const ThreadKey& key : server.running) {
    auto t = threads_.find(key);
    if (t == threads_.end()) continue;
    SetState(key, &t->second, ThreadState::kFailed, reason, out);
    hit.insert(key.program);
  }
  for (auto& p : programs_) p.second.servers_used.erase(id);
  for (ProgramId p : hit) Fail(p, reason, out);
  std::vector<uint64_t> done;
  for (auto& g : gathers_) {
    if (!g.second.waiting.erase(id)) continue;
    ServerStatistics gone;
    gone.server = server.name;
    gone.error = "the server " + why + " before it answered";
    g.second.answers.push_back(std::move(gone));
    if (g.second.waiting.empty()) done.push_back(g.first);
  }
  for (uint64_t g : done) FinishGather(g, "", out);
}

void ThreadRegistry::Tick(TimeMs now, std::vector<Action>* out) {
  std::vector<ServerId> dead;
  for (const auto& s : servers_)
    if (s.second.deadline <= now) dead.push_back(s.first);
  for (ServerId id : dead) ServerGone(id, "missed its liveness deadline", out);
  std::vector<uint64_t> late;
  for (const auto& g : gathers_)
    if (g.second.deadline <= now) late.push_back(g.first);
  for (uint64_t g : late)
    FinishGather(g,
                 "no answer within " + std::to_string(options_.statistics_timeout_ms) + " ms",
                 out);
}

std::string ThreadRegistry::RegisterProgram(ProgramId id, ConnId launcher,
                                            const std::string& launch_node,
                                            const std::string& classpath,
                                            uint32_t processors,
                                            uint32_t launcher_processors) {
  if (programs_.count(id)) return "program id already registered";
  Program& p = programs_[id];
  p.launcher = launcher;
  p.launch_node = launch_node;
  p.classpath = classpath;
  if (processors == 0) {
    uint64_t capacity = 0;
    for (const auto& s : servers_) capacity += s.second.capacity;
    processors = capacity != 0 ? static_cast<uint32_t>(std::min<uint64_t>(capacity, INT32_MAX))
                               : launcher_processors;
  }
  p.processors = std::max<uint32_t>(processors, 1);
  return "";
}

std::string ThreadRegistry::Submit(ProgramId program, uint64_t thread, bool daemon,
                                   std::vector<Action>* out, uint64_t inherited_locals) {
  auto p = programs_.find(program);
  if (p == programs_.end()) return "submit for unknown program";
  if (p->second.failed) return "program has failed";
  ThreadKey key{program, thread};
  if (threads_.count(key)) return "thread already submitted";  // Thread.start twice
  Thread& t = threads_[key];
  t.daemon = daemon;
  t.inherited_locals = inherited_locals;
  queue_.push_back(key);
  SetState(key, &t, ThreadState::kQueued, "", out);
  Dispatch(out);
  return "";
}

std::string ThreadRegistry::ThreadEnded(ServerId server, ProgramId program, uint64_t thread,
                                        bool by_exception, const std::string& detail,
                                        std::vector<Action>* out) {
  auto s = servers_.find(server);
  if (s == servers_.end()) return "thread end from unregistered server";
  ThreadKey key{program, thread};
  auto t = threads_.find(key);
  // A thread of an ended program may report after its program was dropped.
  if (t == threads_.end()) {
    if (programs_.count(program)) return "thread end for unknown thread";
    return "";
  }
  if (t->second.state != ThreadState::kRunning || t->second.server != server)
    return "thread end for a thread not running on this server";
  s->second.running.erase(key);
  SetState(key, &t->second,
           by_exception ? ThreadState::kEndedByException : ThreadState::kEnded, detail, out);
  Dispatch(out);
  return "";
}

std::string ThreadRegistry::Watch(ConnId conn, ProgramId program, uint64_t thread,
                                  std::vector<Action>* out) {
  auto t = threads_.find(ThreadKey{program, thread});
  if (t == threads_.end()) return "watch of unknown thread";
  t->second.watchers.insert(conn);
  Action a{Action::kStateChanged};
  a.conn = conn;
  a.thread = t->first;
  a.state = t->second.state;
  a.server = t->second.server;
  a.detail = t->second.detail;
  out->push_back(a);
  return "";
}

void ThreadRegistry::ConnGone(ConnId conn) {
  for (auto& t : threads_) t.second.watchers.erase(conn);
  // Nobody is left to answer: a launcher's late reply is then ignored.
  for (auto it = fetches_.begin(); it != fetches_.end();) {
    if (it->second.requester == conn) {
      it = fetches_.erase(it);
    } else {
      ++it;
    }
  }
  for (auto it = gathers_.begin(); it != gathers_.end();) {
    if (it->second.requester == conn) {
      it = gathers_.erase(it);
    } else {
      ++it;
    }
  }
}

void ThreadRegistry::ProgramEnded(ProgramId program, const std::string& why,
                                  std::vector<Action>* out) {
  auto p = programs_.find(program);
  if (p == programs_.end()) return;
  // Nobody will answer the program's outstanding resource requests now.
  for (auto it = fetches_.begin(); it != fetches_.end();) {
    if (it->second.program == program) {
      AnswerError(it->second.requester, it->second.request,
                  "resource '" + it->second.name + "' of program " + std::to_string(program) +
                      ": the program ended (" + why + ") before its launcher answered",
                  out);
      it = fetches_.erase(it);
    } else {
      ++it;
    }
  }
  std::vector<uint64_t> gathers;
  for (const auto& g : gathers_)
    if (g.second.program == program) gathers.push_back(g.first);
  for (uint64_t g : gathers)
    FinishGather(g, "the program ended (" + why + ") before the server answered", out);
  // Queued threads never start; running ones are torn down by their servers.
  queue_.erase(std::remove_if(queue_.begin(), queue_.end(),
                              [&](const ThreadKey& k) { return k.program == program; }),
               queue_.end());
  // Every server is told, not only those that ran its threads: the
  // program's objects reach others too (a new object sent along with one a
  // thread there read, a copy moved with a lock taken there, both through
  // JDK objects that programs share), and only its end lets them go.
  for (auto& s : servers_) {
    for (auto it = s.second.running.begin(); it != s.second.running.end();) {
      if (it->program == program) {
        it = s.second.running.erase(it);
      } else {
        ++it;
      }
    }
    Action a{Action::kDropProgram};
    a.server = s.first;
    a.thread.program = program;
    out->push_back(a);
  }
  threads_.erase(threads_.lower_bound(ThreadKey{program, 0}),
                 threads_.upper_bound(ThreadKey{program, UINT64_MAX}));
  programs_.erase(p);
  Action f{Action::kFreeProgram};
  f.thread.program = program;
  out->push_back(f);
  Dispatch(out);  // freed capacity serves other programs' queued threads
}

static std::string Capped(const std::string& text, size_t max) {
  return text.size() <= max ? text : text.substr(0, max) + "...";
}

void ThreadRegistry::AnswerError(ConnId requester, uint64_t request, const std::string& error,
                                 std::vector<Action>* out) {
  Action a{Action::kResourceData};
  a.conn = requester;
  a.request = request;
  a.found = false;
  a.detail = error.empty() ? std::string("error") : error;
  out->push_back(a);
}

void ThreadRegistry::FetchResource(ConnId requester, uint64_t request, ProgramId program,
                                   const std::string& name, std::vector<Action>* out) {
  const std::string what = "resource '" + Capped(name, kMaxResourceName) + "' of program " +
                           std::to_string(program);
  if (name.empty()) return AnswerError(requester, request, "empty resource name", out);
  if (name.size() > kMaxResourceName)
    return AnswerError(requester, request,
                       what + ": name longer than " + std::to_string(kMaxResourceName) +
                           " bytes",
                       out);
  auto p = programs_.find(program);
  if (p == programs_.end())
    return AnswerError(requester, request,
                       what + ": no such program (never registered, or ended)", out);
  Fetch& f = fetches_[++last_fetch_];
  f.requester = requester;
  f.request = request;
  f.program = program;
  f.launcher = p->second.launcher;
  f.name = name;
  Action a{Action::kResourceRequest};
  a.conn = f.launcher;
  a.thread.program = program;
  a.request = last_fetch_;
  a.detail = name;
  out->push_back(a);
}

std::string ThreadRegistry::ResourceReply(ConnId from, uint64_t request, bool found,
                                          std::string data, const std::string& error,
                                          std::vector<Action>* out) {
  auto it = fetches_.find(request);
  if (it == fetches_.end()) {
    if (request == 0 || request > last_fetch_) return "resource reply to a request never made";
    return "";  // its requester went away meanwhile
  }
  if (it->second.launcher != from)
    return "resource reply from a connection that is not the program's launcher";
  Fetch f = std::move(it->second);
  fetches_.erase(it);
  Action a{Action::kResourceData};
  a.conn = f.requester;
  a.request = f.request;
  const std::string what =
      "resource '" + f.name + "' of program " + std::to_string(f.program);
  if (found && data.size() > options_.max_resource_bytes) {
    a.detail = what + " is " + std::to_string(data.size()) + " bytes, more than the " +
               std::to_string(options_.max_resource_bytes) + " a reply may carry";
  } else if (found) {
    a.found = true;
    a.bytes = std::move(data);
  } else if (!error.empty()) {
    a.detail = what + ": " + Capped(error, kMaxErrorText);
  }  // else: not found, no error text
  out->push_back(std::move(a));
  return "";
}

void ThreadRegistry::GatherStatistics(ConnId requester, uint64_t request, ProgramId program,
                                      TimeMs now, std::vector<Action>* out) {
  auto p = programs_.find(program);
  std::string refused;
  if (p == programs_.end()) {
    refused = "statistics of program " + std::to_string(program) +
              ": no such program (never registered, or ended)";
  } else if (p->second.launcher != requester) {
    refused = "statistics of program " + std::to_string(program) +
              ": asked by a connection that is not its launcher";
  }
  if (!refused.empty()) {
    Action a{Action::kStatisticsData};
    a.conn = requester;
    a.request = request;
    a.detail = refused;
    out->push_back(std::move(a));
    return;
  }
  uint64_t id = ++last_gather_;
  Gather& g = gathers_[id];
  g.requester = requester;
  g.request = request;
  g.program = program;
  g.deadline = now + options_.statistics_timeout_ms;
  for (ServerId s : p->second.servers_used) {
    if (!servers_.count(s)) continue;
    g.waiting.insert(s);
    Action a{Action::kStatisticsRequest};
    a.server = s;
    a.thread.program = program;
    a.request = id;
    out->push_back(a);
  }
  if (g.waiting.empty()) FinishGather(id, "", out);
}

std::string ThreadRegistry::StatisticsReply(ServerId from, uint64_t request,
                                            const std::string& text, std::vector<Action>* out) {
  auto it = gathers_.find(request);
  if (it == gathers_.end()) {
    if (request == 0 || request > last_gather_) return "statistics reply to a request never made";
    return "";  // answered without it (deadline, program ended, launcher gone)
  }
  Gather& g = it->second;
  if (!g.waiting.erase(from)) return "statistics reply from a server that was not asked";
  ServerStatistics answer;
  answer.server = ServerName(from);
  answer.text = text.size() <= kMaxStatisticsText
                    ? text
                    : text.substr(0, kMaxStatisticsText) + "\n  ... (cut at " +
                          std::to_string(kMaxStatisticsText) + " bytes)\n";
  g.answers.push_back(std::move(answer));
  if (g.waiting.empty()) FinishGather(request, "", out);
  return "";
}

void ThreadRegistry::FinishGather(uint64_t id, const std::string& why,
                                  std::vector<Action>* out) {
  auto it = gathers_.find(id);
  if (it == gathers_.end()) return;
  Gather g = std::move(it->second);
  gathers_.erase(it);
  for (ServerId s : g.waiting) {
    ServerStatistics missing;
    missing.server = ServerName(s);
    missing.error = why;
    g.answers.push_back(std::move(missing));
  }
  std::sort(g.answers.begin(), g.answers.end(),
            [](const ServerStatistics& a, const ServerStatistics& b) { return a.server < b.server; });
  Action a{Action::kStatisticsData};
  a.conn = g.requester;
  a.request = g.request;
  a.statistics = std::move(g.answers);
  out->push_back(std::move(a));
}

std::string ThreadRegistry::Console(ProgramId program, uint64_t thread, uint32_t stream,
                                    std::string data, std::vector<Action>* out) {
  auto p = programs_.find(program);
  if (p == programs_.end())
    return "console output for unknown or ended program " + std::to_string(program) +
           " dropped";
  if (stream < 1 || stream > 4)
    return "console output with stream " + std::to_string(stream) +
           " (1 = out, 2 = err, 3 = stdout, 4 = stderr) dropped";
  Action a{Action::kConsole};
  a.conn = p->second.launcher;
  a.thread = ThreadKey{program, thread};
  a.stream = stream;
  a.bytes = std::move(data);
  out->push_back(std::move(a));
  return "";
}

void ThreadRegistry::QueryThreadState(ConnId asker, ProgramId program, uint64_t thread,
                                      uint64_t request, bool stack_trace,
                                      std::vector<Action>* out) {
  Action a{Action::kThreadStateQuery};
  a.thread = ThreadKey{program, thread};
  a.request = request;
  a.reply_to = asker;
  a.found = stack_trace;
  auto p = programs_.find(program);
  auto t = threads_.find(a.thread);
  if (p != programs_.end() && t == threads_.end()) {
    a.conn = p->second.launcher;  // main, or a thread the launcher runs itself
  } else if (p != programs_.end() && t->second.state == ThreadState::kRunning) {
    a.server = t->second.server;
  } else {
    Action d{Action::kThreadStateData};
    d.conn = asker;
    d.request = request;
    d.status = -1;
    out->push_back(std::move(d));
    return;
  }
  out->push_back(std::move(a));
}

std::string ThreadRegistry::Unpark(ProgramId program, uint64_t thread, bool interrupt,
                                   std::vector<Action>* out) {
  auto p = programs_.find(program);
  if (p == programs_.end())
    return "unpark for unknown or ended program " + std::to_string(program) + " dropped";
  Action a{Action::kUnpark};
  a.thread = ThreadKey{program, thread};
  a.status = interrupt ? 1 : 0;
  auto t = threads_.find(a.thread);
  if (t == threads_.end()) {
    a.conn = p->second.launcher;
  } else if (t->second.state == ThreadState::kRunning) {
    a.server = t->second.server;
  } else {
    return "";
  }
  out->push_back(std::move(a));
  return "";
}

std::string ThreadRegistry::Exit(ProgramId program, int32_t status, const std::string& detail,
                                 std::vector<Action>* out) {
  auto p = programs_.find(program);
  if (p == programs_.end())
    return "exit(" + std::to_string(status) + ") for unknown or ended program " +
           std::to_string(program) + " ignored";
  if (p->second.exiting)
    return "exit(" + std::to_string(status) + ") of program " + std::to_string(program) +
           " ignored: it is already exiting with status " +
           std::to_string(p->second.exit_status);
  p->second.exiting = true;
  p->second.exit_status = status;
  Action a{Action::kExit};
  a.conn = p->second.launcher;
  a.thread.program = program;
  a.status = status;
  a.detail = Capped(detail, kMaxErrorText);
  out->push_back(a);
  return "";
}

// A server with spare capacity, the least loaded first; when every server
// is full, the one least loaded for its capacity (it runs more threads than
// it has CPUs): Java starts every thread at once, and a program whose
// threads wait for each other (a barrier of N threads) must not wait for a
// thread that waits for a slot. Capacity places threads; it never holds one.
ServerId ThreadRegistry::PickServer() const {
  ServerId best = 0;
  const Server* b = nullptr;
  auto spare = [](const Server& s) { return s.running.size() < s.capacity; };
  for (const auto& s : servers_) {
    const Server& c = s.second;
    bool better;
    if (b == nullptr) {
      better = true;
    } else if (spare(c) != spare(*b)) {
      better = spare(c);
    } else if (spare(c)) {
      better = c.running.size() < b->running.size() ||
               (c.running.size() == b->running.size() && c.last_assigned < b->last_assigned);
    } else {
      // running/capacity, compared without division
      uint64_t load_c = uint64_t{c.running.size()} * b->capacity;
      uint64_t load_b = uint64_t{b->running.size()} * c.capacity;
      better = load_c < load_b || (load_c == load_b && c.last_assigned < b->last_assigned);
    }
    if (better) {
      b = &c;
      best = s.first;
    }
  }
  return best;
}

void ThreadRegistry::Dispatch(std::vector<Action>* out) {
  while (!queue_.empty()) {
    ServerId sid = PickServer();
    if (sid == 0) return;  // no thread server yet: threads stay queued
    ThreadKey key = queue_.front();
    queue_.pop_front();
    Server& s = servers_[sid];
    Thread& t = threads_[key];
    s.running.insert(key);
    s.last_assigned = ++assign_counter_;
    t.server = sid;
    programs_[key.program].servers_used.insert(sid);
    Action a{Action::kAssign};
    a.server = sid;
    a.thread = key;
    a.inherited_locals = t.inherited_locals;
    out->push_back(a);
    SetState(key, &t, ThreadState::kRunning, s.name, out);
  }
}

void ThreadRegistry::SetState(const ThreadKey& key, Thread* t, ThreadState s,
                              const std::string& detail, std::vector<Action>* out) {
  t->state = s;
  t->detail = detail;
  std::set<ConnId> to = t->watchers;
  auto p = programs_.find(key.program);
  if (p != programs_.end() && p->second.launcher != 0) to.insert(p->second.launcher);
  for (ConnId c : to) {
    Action a{Action::kStateChanged};
    a.conn = c;
    a.thread = key;
    a.state = s;
    a.server = t->server;
    a.detail = detail;
    out->push_back(a);
  }
}

void ThreadRegistry::Fail(ProgramId program, const std::string& reason,
                          std::vector<Action>* out) {
  auto p = programs_.find(program);
  if (p == programs_.end() || p->second.failed) return;
  p->second.failed = true;
  // Its queued threads will never run; the launcher ends the program, which
  // comes back as ProgramEnded and frees everything.
  queue_.erase(std::remove_if(queue_.begin(), queue_.end(),
                              [&](const ThreadKey& k) { return k.program == program; }),
               queue_.end());
  Action a{Action::kProgramFailed};
  a.conn = p->second.launcher;
  a.thread.program = program;
  a.detail = reason;
  out->push_back(a);
}

int ThreadRegistry::Running(ServerId id) const {
  auto it = servers_.find(id);
  return it == servers_.end() ? -1 : static_cast<int>(it->second.running.size());
}

bool ThreadRegistry::Lookup(ThreadKey key, ThreadState* state, ServerId* server) const {
  auto it = threads_.find(key);
  if (it == threads_.end()) return false;
  if (state) *state = it->second.state;
  if (server) *server = it->second.server;
  return true;
}

int ThreadRegistry::LiveNonDaemon(ProgramId program) const {
  int n = 0;
  for (auto it = threads_.lower_bound(ThreadKey{program, 0});
       it != threads_.end() && it->first.program == program; ++it)
    if (!it->second.daemon && !Finished(it->second.state)) n++;
  return n;
}

std::vector<ProgramId> ThreadRegistry::ProgramsOf(ConnId conn) const {
  std::vector<ProgramId> r;
  for (const auto& p : programs_)
    if (p.second.launcher == conn) r.push_back(p.first);
  return r;
}

bool ThreadRegistry::ProgramInfo(ProgramId id, std::string* launch_node,
                                 std::string* classpath) const {
  auto it = programs_.find(id);
  if (it == programs_.end()) return false;
  *launch_node = it->second.launch_node;
  *classpath = it->second.classpath;
  return true;
}

uint32_t ThreadRegistry::ProgramProcessors(ProgramId id) const {
  auto it = programs_.find(id);
  return it == programs_.end() ? 0 : it->second.processors;
}

std::string ThreadRegistry::ServerName(ServerId id) const {
  auto it = servers_.find(id);
  return it == servers_.end() ? std::string() : it->second.name;
}

TimeMs ThreadRegistry::NextDeadline() const {
  TimeMs d = -1;
  for (const auto& s : servers_)
    if (d < 0 || s.second.deadline < d) d = s.second.deadline;
  for (const auto& g : gathers_)
    if (d < 0 || g.second.deadline < d) d = g.second.deadline;
  return d;
}

}  // namespace tm
}  // namespace djava
