#include "tm_service.h"

#include <cstdio>

namespace djava {
namespace tm {

TmService::TmService(Options options, Transport* transport)
    : options_(std::move(options)), transport_(transport), registry_(options_.registry) {}

void TmService::Log(const std::string& line) {
  if (options_.log) {
    options_.log(line);
  } else {
    std::fprintf(stderr, "thread-manager: %s\n", line.c_str());
  }
}

void TmService::OnConnect(ConnId conn, const std::string& peer) {
  conns_[conn].peer = peer;
}

void TmService::Reply(ConnId conn, const std::string& error) {
  if (error.empty()) return;
  Log("connection " + std::to_string(conn) + " (" + conns_[conn].peer + "): " + error);
  TmServerMessage m;
  m.mutable_error()->set_message(error);
  transport_->Send(conn, m);
}

static tmpb::ThreadState ToProto(ThreadState s);

void TmService::OnMessage(ConnId conn, const TmClientMessage& msg, TimeMs now) {
  auto c = conns_.find(conn);
  if (c == conns_.end()) return;
  std::vector<Action> out;
  switch (msg.body_case()) {
    case TmClientMessage::kRegisterServer: {
      if (c->second.is_server) return Reply(conn, "already registered as a server");
      std::string err = registry_.RegisterServer(conn, msg.register_server().name(),
                                                 msg.register_server().capacity(), now, &out);
      if (!err.empty()) return transport_->Close(conn, err);
      c->second.is_server = true;
      TmServerMessage r;
      r.mutable_registered()->set_server_id(conn);
      for (const auto& s : options_.sos_servers) r.mutable_registered()->add_sos_servers(s);
      r.mutable_registered()->set_heartbeat_interval_ms(options_.heartbeat_interval_ms);
      transport_->Send(conn, r);
      Log("server '" + msg.register_server().name() + "' (id " + std::to_string(conn) +
          ", capacity " + std::to_string(msg.register_server().capacity()) + ") registered");
      break;
    }
    case TmClientMessage::kRegisterProgram: {
      const auto& p = msg.register_program();
      std::string err =
          registry_.RegisterProgram(p.program(), conn, p.launch_node(), p.classpath(),
                                    p.processors(), p.launcher_processors());
      if (!err.empty()) return Reply(conn, err);
      TmServerMessage r;
      r.mutable_registered()->set_processors(registry_.ProgramProcessors(p.program()));
      for (const auto& s : options_.sos_servers) r.mutable_registered()->add_sos_servers(s);
      r.mutable_registered()->set_heartbeat_interval_ms(options_.heartbeat_interval_ms);
      transport_->Send(conn, r);
      Log("program " + std::to_string(p.program()) + " from " + p.launch_node() +
          " registered, " + std::to_string(registry_.ProgramProcessors(p.program())) +
          " processors");
      break;
    }
    case TmClientMessage::kSubmit:
      Reply(conn, registry_.Submit(msg.submit().program(), msg.submit().thread(),
                                   msg.submit().daemon(), &out,
                                   msg.submit().inherited_locals()));
      break;
    case TmClientMessage::kThreadEnded: {
      const auto& e = msg.thread_ended();
      if (!c->second.is_server) return Reply(conn, "thread end from a non-server");
      Reply(conn, registry_.ThreadEnded(conn, e.program(), e.thread(), e.by_exception(),
                                        e.detail(), &out));
      break;
    }
    case TmClientMessage::kWatch:
      Reply(conn, registry_.Watch(conn, msg.watch().program(), msg.watch().thread(), &out));
      break;
    case TmClientMessage::kProgramEnd: {
      ProgramId p = msg.program_end().program();
      bool mine = false;
      for (ProgramId q : registry_.ProgramsOf(conn)) mine |= q == p;
      if (!mine) return Reply(conn, "program end for a program this connection did not register");
      Log("program " + std::to_string(p) + " ended: " + msg.program_end().reason());
      registry_.ProgramEnded(p, msg.program_end().reason(), &out);
      break;
    }
    case TmClientMessage::kHeartbeat:
      if (c->second.is_server) Reply(conn, registry_.Heartbeat(conn, now));
      break;
    case TmClientMessage::kFetchResource: {
      const auto& f = msg.fetch_resource();
      registry_.FetchResource(conn, f.request(), f.program(), f.name(), &out);
      break;
    }
    case TmClientMessage::kResourceReply: {
      const auto& r = msg.resource_reply();
      Reply(conn, registry_.ResourceReply(conn, r.request(), r.found(), r.data(), r.error(),
                                          &out));
      break;
    }
    case TmClientMessage::kConsole: {
      // Dropped output is not the sender's fault (its program may just have
      // ended): logged once per program, never answered or fatal.
      const auto& o = msg.console();
      std::string why = registry_.Console(o.program(), o.thread(), o.stream(), o.data(), &out);
      if (!why.empty() && c->second.relay_drop_logged.insert(o.program()).second)
        Log("connection " + std::to_string(conn) + " (" + c->second.peer + "): " + why +
            " (further drops for this program are not logged)");
      break;
    }
    case TmClientMessage::kProgramExit: {
      const auto& e = msg.program_exit();
      std::string why = registry_.Exit(e.program(), e.status(), e.detail(), &out);
      Log(why.empty() ? "program " + std::to_string(e.program()) + ": exit(" +
                            std::to_string(e.status()) + ") from " + c->second.peer + " (" +
                            e.detail() + "), told its launcher"
                      : "connection " + std::to_string(conn) + " (" + c->second.peer +
                            "): " + why);
      break;
    }
    case TmClientMessage::kUnpark: {
      // As console output: a drop is no one's fault (the program may just
      // have ended), logged once per program.
      const auto& u = msg.unpark();
      std::string why = registry_.Unpark(u.program(), u.thread(), u.interrupt(), &out);
      if (!why.empty() && c->second.relay_drop_logged.insert(u.program()).second)
        Log("connection " + std::to_string(conn) + " (" + c->second.peer + "): " + why +
            " (further drops for this program are not logged)");
      break;
    }
    case TmClientMessage::kQueryThreadState: {
      const auto& q = msg.query_thread_state();
      registry_.QueryThreadState(conn, q.program(), q.thread(), q.request(), q.stack_trace(),
                                 &out);
      break;
    }
    case TmClientMessage::kThreadStateAnswer: {
      // Straight back to the asker, if it is still here.
      const auto& a = msg.thread_state_answer();
      if (conns_.count(a.reply_to())) {
        TmServerMessage d;
        d.mutable_thread_state_data()->set_request(a.request());
        d.mutable_thread_state_data()->set_status(a.status());
        d.mutable_thread_state_data()->set_stack_trace(a.stack_trace());
        transport_->Send(a.reply_to(), d);
      }
      break;
    }
    case TmClientMessage::kGatherStatistics: {
      const auto& g = msg.gather_statistics();
      registry_.GatherStatistics(conn, g.request(), g.program(), now, &out);
      break;
    }
    case TmClientMessage::kStatisticsReply: {
      if (!c->second.is_server) return Reply(conn, "statistics reply from a non-server");
      const auto& r = msg.statistics_reply();
      Reply(conn, registry_.StatisticsReply(conn, r.request(), r.text(), &out));
      break;
    }
    default:
      return transport_->Close(conn, "empty or unknown thread-manager message");
  }
  Apply(&out);
}

void TmService::OnDisconnect(ConnId conn, TimeMs now) {
  (void)now;
  auto c = conns_.find(conn);
  if (c == conns_.end()) return;
  std::vector<Action> out;
  if (c->second.is_server) {
    Log("server '" + registry_.ServerName(conn) + "' (id " + std::to_string(conn) +
        ") disconnected");
    registry_.ServerGone(conn, "disconnected", &out);
  }
  // A launcher that goes away (normal end, crash, killed) ends its programs.
  for (ProgramId p : registry_.ProgramsOf(conn)) {
    Log("program " + std::to_string(p) + " ended: its launcher disconnected");
    registry_.ProgramEnded(p, "launcher disconnected", &out);
  }
  registry_.ConnGone(conn);
  conns_.erase(c);
  Apply(&out);
}

void TmService::OnTick(TimeMs now) {
  std::vector<Action> out;
  registry_.Tick(now, &out);
  Apply(&out);
  // Servers declared dead are closed so that they cannot linger half-alive.
  for (auto it = conns_.begin(); it != conns_.end();) {
    if (it->second.is_server && !registry_.HasServer(it->first)) {
      ConnId id = it->first;
      it->second.is_server = false;
      ++it;
      transport_->Close(id, "missed its liveness deadline");
    } else {
      ++it;
    }
  }
}

void TmService::Apply(std::vector<Action>* actions) {
  for (Action& a : *actions) {
    TmServerMessage m;
    switch (a.kind) {
      case Action::kAssign: {
        auto* as = m.mutable_assign();
        as->set_program(a.thread.program);
        as->set_thread(a.thread.thread);
        std::string node, cp;
        registry_.ProgramInfo(a.thread.program, &node, &cp);
        as->set_classpath(cp);
        as->set_launch_node(node);
        as->set_processors(registry_.ProgramProcessors(a.thread.program));
        as->set_inherited_locals(a.inherited_locals);
        transport_->Send(a.server, m);
        break;
      }
      case Action::kStateChanged: {
        auto* st = m.mutable_state();
        st->set_program(a.thread.program);
        st->set_thread(a.thread.thread);
        st->set_state(ToProto(a.state));
        st->set_server_id(a.server);
        st->set_server_name(registry_.ServerName(a.server));
        st->set_detail(a.detail);
        st->set_live_non_daemon(registry_.LiveNonDaemon(a.thread.program));
        if (conns_.count(a.conn)) transport_->Send(a.conn, m);
        break;
      }
      case Action::kProgramFailed:
        m.mutable_program_failed()->set_program(a.thread.program);
        m.mutable_program_failed()->set_reason(a.detail);
        Log("program " + std::to_string(a.thread.program) + " failed: " + a.detail);
        if (conns_.count(a.conn)) transport_->Send(a.conn, m);
        break;
      case Action::kDropProgram:
        m.mutable_drop_program()->set_program(a.thread.program);
        transport_->Send(a.server, m);
        break;
      case Action::kFreeProgram:
        if (options_.free_program) options_.free_program(a.thread.program);
        break;
      case Action::kResourceRequest: {
        auto* r = m.mutable_resource_request();
        r->set_program(a.thread.program);
        r->set_request(a.request);
        r->set_name(a.detail);
        if (conns_.count(a.conn)) transport_->Send(a.conn, m);
        break;
      }
      case Action::kResourceData: {
        auto* d = m.mutable_resource_data();
        d->set_request(a.request);
        d->set_found(a.found);
        d->set_data(std::move(a.bytes));
        d->set_error(a.detail);
        if (!a.found && !a.detail.empty()) Log(a.detail);
        if (conns_.count(a.conn)) transport_->Send(a.conn, m);
        break;
      }
      case Action::kConsole: {
        auto* o = m.mutable_console();
        o->set_program(a.thread.program);
        o->set_thread(a.thread.thread);
        o->set_stream(a.stream);
        o->set_data(std::move(a.bytes));
        if (conns_.count(a.conn)) transport_->Send(a.conn, m);
        break;
      }
      case Action::kExit: {
        auto* e = m.mutable_program_exit();
        e->set_program(a.thread.program);
        e->set_status(a.status);
        e->set_detail(a.detail);
        if (conns_.count(a.conn)) transport_->Send(a.conn, m);
        break;
      }
      case Action::kUnpark: {
        auto* u = m.mutable_unpark();
        u->set_program(a.thread.program);
        u->set_thread(a.thread.thread);
        u->set_interrupt(a.status != 0);
        if (a.server != 0) {
          transport_->Send(a.server, m);
        } else if (conns_.count(a.conn)) {
          transport_->Send(a.conn, m);
        }
        break;
      }
      case Action::kThreadStateQuery: {
        auto* q = m.mutable_thread_state_query();
        q->set_program(a.thread.program);
        q->set_thread(a.thread.thread);
        q->set_request(a.request);
        q->set_reply_to(a.reply_to);
        q->set_stack_trace(a.found);
        if (a.server != 0) {
          transport_->Send(a.server, m);
        } else if (conns_.count(a.conn)) {
          transport_->Send(a.conn, m);
        } else if (conns_.count(a.reply_to)) {
          // No launcher to ask: unknown.
          TmServerMessage d;
          d.mutable_thread_state_data()->set_request(a.request);
          d.mutable_thread_state_data()->set_status(-1);
          transport_->Send(a.reply_to, d);
        }
        break;
      }
      case Action::kThreadStateData: {
        auto* d = m.mutable_thread_state_data();
        d->set_request(a.request);
        d->set_status(a.status);
        if (conns_.count(a.conn)) transport_->Send(a.conn, m);
        break;
      }
      case Action::kStatisticsRequest: {
        auto* r = m.mutable_statistics_request();
        r->set_program(a.thread.program);
        r->set_request(a.request);
        transport_->Send(a.server, m);
        break;
      }
      case Action::kStatisticsData: {
        auto* d = m.mutable_statistics_data();
        d->set_request(a.request);
        d->set_error(a.detail);
        for (ServerStatistics& s : a.statistics) {
          auto* e = d->add_servers();
          e->set_server_name(s.server);
          e->set_text(std::move(s.text));
          e->set_error(s.error);
          if (!s.error.empty()) Log("statistics of server '" + s.server + "': " + s.error);
        }
        if (!a.detail.empty()) Log(a.detail);
        if (conns_.count(a.conn)) transport_->Send(a.conn, m);
        break;
      }
    }
  }
}

static tmpb::ThreadState ToProto(ThreadState s) {
  switch (s) {
    case ThreadState::kQueued: return tmpb::QUEUED;
    case ThreadState::kRunning: return tmpb::RUNNING;
    case ThreadState::kEnded: return tmpb::ENDED;
    case ThreadState::kEndedByException: return tmpb::ENDED_BY_EXCEPTION;
    case ThreadState::kFailed: return tmpb::FAILED;
  }
  return tmpb::THREAD_STATE_UNSPECIFIED;
}

}  // namespace tm
}  // namespace djava
