// sos-probe: a node of the shared-object system driven line by line, for the
// process tests (test/py/sos). Connects through the C ABI with client-held
// bytes, prints "ready NODE" (or "error CODE message" and exits 1), then
// reads one command a line on stdin and answers one line on stdout:
//
//   alloc SIZE [CLASS [HASH]]  ok ID          a fresh zeroed chunk, M here (dirty)
//   write ID OFFSET VALUE      ok             lock, store a u64, release (stays M here)
//   read ID OFFSET             ok VALUE       load, read a u64, release
//   load ID | lock ID          ok             begin an access and keep it
//   get ID OFFSET              ok VALUE       read during a kept access
//   set ID OFFSET VALUE        ok             write during a kept lock
//   release ID                 ok             end the kept access
//   meta ID                    ok size=N class=C program=P element_type=E array_length=L hash=H
//   prefetch ID,ID,...         ok
//   free ID                    ok
//   node                       ok NODE
//   stats                      ok misses=.. upgrades=.. invalidations=.. flushes=.. bytes_in=.. bytes_out=..
//   sleep MS                   ok
//   close                      ok             die/okToDie (dirty chunks written home), exit 0
//   abandon                    ok             disconnect without write-back, exit 0
//   crash                                     exit 3 at once, nothing said to anyone
// Failures answer "error CODE message" (CODE: LOST, NO_SUCH_CHUNK, FREED,
// IN_USE, TOO_LARGE, BAD_ARGUMENT, DISCONNECTED, INSTALL_FAILED, PROTOCOL, or
// BAD_COMMAND for a line the probe does not understand). Ids are printed as
// 0x%016x and read in any base strtoull accepts. End of input abandons.
//
//   sos-probe --server H:P --secret-file F [--node-name X]
#include <unistd.h>

#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "djava/sos_client.h"

namespace {

void Say(const std::string& line) {
  std::fputs(line.c_str(), stdout);
  std::fputc('\n', stdout);
  std::fflush(stdout);
}

void SayError(djava_sos_status s, const djava_sos_error& e) {
  std::string m = e.message;
  for (char& ch : m)
    if (ch == '\n') ch = ' ';
  Say(std::string("error ") + djava_sos_status_name(s) + " " + m);
}

bool ParseU64(const std::string& v, uint64_t* out) {
  if (v.empty() || v[0] == '-') return false;
  char* end = nullptr;
  errno = 0;
  unsigned long long x = std::strtoull(v.c_str(), &end, 0);
  if (*end != '\0' || errno != 0) return false;
  *out = x;
  return true;
}

std::string Hex(uint64_t id) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%016" PRIx64, id);
  return buf;
}

[[noreturn]] void Usage(const std::string& why) {
  std::fprintf(stderr,
               "sos-probe: %s\nusage: sos-probe --server H:P --secret-file F [--node-name X]\n",
               why.c_str());
  std::exit(2);
}

class Probe {
 public:
  explicit Probe(djava_sos_client* c) : client_(c) {}

  // One command; false when the probe should exit (after answering).
  bool Run(const std::vector<std::string>& w) {
    const std::string& cmd = w[0];
    djava_sos_error e{};
    uint64_t id = 0, offset = 0, value = 0;
    if (cmd == "alloc" && (w.size() >= 2 && w.size() <= 4)) {
      uint64_t size = 0, hash = 0;
      if (!ParseU64(w[1], &size) || (w.size() == 4 && !ParseU64(w[3], &hash))) return Bad(w);
      djava_sos_meta meta{};
      meta.class_name = w.size() >= 3 ? w[2].c_str() : "java.lang.Object";
      meta.program = 1;
      meta.identity_hash = static_cast<uint32_t>(hash);
      djava_sos_chunk* c = djava_sos_alloc(client_, size, &meta, &e);
      if (c == nullptr) {
        SayError(e.status, e);
        return true;
      }
      Say("ok " + Hex(djava_sos_id(c)));
      return true;
    }
    if ((cmd == "write" && w.size() == 4) || (cmd == "set" && w.size() == 4)) {
      if (!ParseU64(w[1], &id) || !ParseU64(w[2], &offset) || !ParseU64(w[3], &value))
        return Bad(w);
      djava_sos_chunk* c = Handle(id);
      if (c == nullptr) return true;
      if (cmd == "write") {
        djava_sos_status s = djava_sos_lock(c, &e);
        if (s != DJAVA_SOS_OK) {
          SayError(s, e);
          return true;
        }
      }
      const bool fits = offset + 8 <= djava_sos_size(c);
      if (fits) std::memcpy(static_cast<char*>(djava_sos_data(c)) + offset, &value, 8);
      if (cmd == "write") djava_sos_release(c);
      if (!fits) return OutOfRange(c, offset);
      Say("ok");
      return true;
    }
    if ((cmd == "read" && w.size() == 3) || (cmd == "get" && w.size() == 3)) {
      if (!ParseU64(w[1], &id) || !ParseU64(w[2], &offset)) return Bad(w);
      djava_sos_chunk* c = Handle(id);
      if (c == nullptr) return true;
      if (cmd == "read") {
        djava_sos_status s = djava_sos_load(c, &e);
        if (s != DJAVA_SOS_OK) {
          SayError(s, e);
          return true;
        }
      }
      const bool fits = offset + 8 <= djava_sos_size(c);
      if (fits) std::memcpy(&value, static_cast<char*>(djava_sos_data(c)) + offset, 8);
      if (cmd == "read") djava_sos_release(c);
      if (!fits) return OutOfRange(c, offset);
      Say("ok " + std::to_string(value));
      return true;
    }
    if ((cmd == "load" || cmd == "lock") && w.size() == 2) {
      if (!ParseU64(w[1], &id)) return Bad(w);
      djava_sos_chunk* c = Handle(id);
      if (c == nullptr) return true;
      djava_sos_status s = cmd == "load" ? djava_sos_load(c, &e) : djava_sos_lock(c, &e);
      if (s != DJAVA_SOS_OK) {
        SayError(s, e);
        return true;
      }
      Say("ok");
      return true;
    }
    if (cmd == "release" && w.size() == 2) {
      if (!ParseU64(w[1], &id)) return Bad(w);
      djava_sos_chunk* c = Handle(id);
      if (c == nullptr) return true;
      djava_sos_release(c);
      Say("ok");
      return true;
    }
    if (cmd == "meta" && w.size() == 2) {
      if (!ParseU64(w[1], &id)) return Bad(w);
      djava_sos_chunk* c = Handle(id);
      if (c == nullptr) return true;
      djava_sos_status s = djava_sos_load(c, &e);
      if (s != DJAVA_SOS_OK) {
        SayError(s, e);
        return true;
      }
      const djava_sos_meta* m = djava_sos_meta_of(c);
      std::string line = "ok size=" + std::to_string(djava_sos_size(c));
      if (m != nullptr) {
        line += std::string(" class=") + (m->class_name != nullptr ? m->class_name : "-") +
                " program=" + std::to_string(m->program) +
                " element_type=" + std::to_string(m->element_type) +
                " array_length=" + std::to_string(m->array_length) +
                " hash=" + std::to_string(m->identity_hash);
      } else {
        line += " class=-";
      }
      djava_sos_release(c);
      Say(line);
      return true;
    }
    if (cmd == "prefetch" && w.size() == 2) {
      std::vector<uint64_t> ids;
      std::stringstream list(w[1]);
      std::string one;
      while (std::getline(list, one, ',')) {
        if (!ParseU64(one, &id)) return Bad(w);
        ids.push_back(id);
      }
      djava_sos_status s = djava_sos_prefetch(client_, ids.data(), ids.size(), &e);
      if (s != DJAVA_SOS_OK) SayError(s, e);
      else Say("ok");
      return true;
    }
    if (cmd == "free" && w.size() == 2) {
      if (!ParseU64(w[1], &id)) return Bad(w);
      djava_sos_chunk* c = Handle(id);
      if (c == nullptr) return true;
      djava_sos_status s = djava_sos_free(c, &e);
      if (s != DJAVA_SOS_OK) SayError(s, e);
      else Say("ok");
      return true;
    }
    if (cmd == "node" && w.size() == 1) {
      Say("ok " + std::to_string(djava_sos_node(client_)));
      return true;
    }
    if (cmd == "stats" && w.size() == 1) {
      djava_sos_stats st{};
      djava_sos_get_stats(client_, &st);
      Say("ok misses=" + std::to_string(st.misses) + " upgrades=" + std::to_string(st.upgrades) +
          " invalidations=" + std::to_string(st.invalidations) +
          " flushes=" + std::to_string(st.flushes) + " bytes_in=" + std::to_string(st.bytes_in) +
          " bytes_out=" + std::to_string(st.bytes_out));
      return true;
    }
    if (cmd == "sleep" && w.size() == 2) {
      if (!ParseU64(w[1], &value)) return Bad(w);
      std::this_thread::sleep_for(std::chrono::milliseconds(value));
      Say("ok");
      return true;
    }
    if (cmd == "close" && w.size() == 1) {
      djava_sos_status s = djava_sos_close(client_, &e);
      client_ = nullptr;
      if (s != DJAVA_SOS_OK) {
        SayError(s, e);
        std::exit(1);
      }
      Say("ok");
      return false;
    }
    if (cmd == "abandon" && w.size() == 1) {
      djava_sos_abandon(client_);
      client_ = nullptr;
      Say("ok");
      return false;
    }
    if (cmd == "crash" && w.size() == 1) {
      std::fflush(stdout);
      _exit(3);
    }
    return Bad(w);
  }

  djava_sos_client* client() const { return client_; }

 private:
  djava_sos_chunk* Handle(uint64_t id) {
    djava_sos_chunk* c = djava_sos_chunk_for(client_, id);
    if (c == nullptr) Say("error BAD_ARGUMENT no chunk has id " + Hex(id));
    return c;
  }

  bool OutOfRange(djava_sos_chunk* c, uint64_t offset) {
    Say("error BAD_ARGUMENT offset " + std::to_string(offset) + " is outside chunk " +
        Hex(djava_sos_id(c)) + " of " + std::to_string(djava_sos_size(c)) + " bytes");
    return true;
  }

  bool Bad(const std::vector<std::string>& w) {
    std::string line;
    for (const auto& x : w) line += (line.empty() ? "" : " ") + x;
    Say("error BAD_COMMAND cannot parse: " + line);
    return true;
  }

  djava_sos_client* client_;
};

}  // namespace

int main(int argc, char** argv) {
  std::string server, secret_file, node_name;
  for (int i = 1; i < argc; i++) {
    const std::string a = argv[i];
    if (i + 1 >= argc) Usage("missing value for " + a);
    const std::string v = argv[++i];
    if (a == "--server") server = v;
    else if (a == "--secret-file") secret_file = v;
    else if (a == "--node-name") node_name = v;
    else Usage("unknown option " + a);
  }
  if (server.empty() || secret_file.empty()) Usage("--server and --secret-file are required");
  if (node_name.empty()) node_name = "sos-probe:" + std::to_string(getpid());

  djava_sos_config config{server.c_str(), secret_file.c_str(), node_name.c_str(), nullptr};
  djava_sos_client* client = nullptr;
  djava_sos_error e{};
  djava_sos_status s = djava_sos_connect(&config, &client, &e);
  if (s != DJAVA_SOS_OK) {
    SayError(s, e);
    return 1;
  }
  Say("ready " + std::to_string(djava_sos_node(client)));

  Probe probe(client);
  std::string line;
  while (std::getline(std::cin, line)) {
    std::vector<std::string> words;
    std::stringstream in(line);
    std::string word;
    while (in >> word) words.push_back(word);
    if (words.empty()) continue;
    if (!probe.Run(words)) return 0;
  }
  if (probe.client() != nullptr) djava_sos_abandon(probe.client());
  return 0;
}
