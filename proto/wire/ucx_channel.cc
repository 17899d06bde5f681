#include "wire/ucx_channel.h"

#include <poll.h>
#include <sched.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <ucp/api/ucp.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

namespace djava {
namespace wire {

bool ParseTransport(const std::string& text, Transport* transport) {
  if (text == "auto") {
    *transport = Transport::kAuto;
  } else if (text == "ucx") {
    *transport = Transport::kUcx;
  } else if (text == "tcp") {
    *transport = Transport::kTcp;
  } else {
    return false;
  }
  return true;
}

const char* TransportName(Transport transport) {
  switch (transport) {
    case Transport::kAuto:
      return "auto";
    case Transport::kUcx:
      return "ucx";
    case Transport::kTcp:
      return "tcp";
  }
  return "?";
}

namespace {

// UCX's transports when UCX_TLS does not say (README.md: Transports).
constexpr char kDefaultUcxTls[] = "^tcp,cma,sysv";

std::atomic<int> chosen_transport{-1};
std::atomic<uint64_t> endpoints_opened{0};

// The process's UCX context, made on first use; nullptr if UCX has no
// usable transport here (then *error says why, every time).
ucp_context_h Context(std::string* error) {
  static std::once_flag once;
  static ucp_context_h context = nullptr;
  static std::string failure;
  std::call_once(once, [] {
    ucp_config_t* config = nullptr;
    ucs_status_t s = ucp_config_read(nullptr, nullptr, &config);
    if (s != UCS_OK) {
      failure = std::string("cannot read UCX's configuration: ") + ucs_status_string(s);
      return;
    }
    // Unless told otherwise: shared memory and RDMA devices, not UCX's own
    // TCP transport, which would listen on every interface without the
    // cluster's authentication (connections between hosts without RDMA
    // stay on djava's TCP). Left out too: cma, which needs ptrace rights
    // that hardened hosts refuse, and System V shared memory, whose
    // segments UCX makes readable and writable by the owner's group
    // (POSIX shared memory's files are the owner's alone, mode 0600).
    if (std::getenv("UCX_TLS") == nullptr) ucp_config_modify(config, "TLS", kDefaultUcxTls);
    ucp_params_t params{};
    params.field_mask = UCP_PARAM_FIELD_FEATURES | UCP_PARAM_FIELD_MT_WORKERS_SHARED;
    params.features = UCP_FEATURE_STREAM | UCP_FEATURE_WAKEUP;
    params.mt_workers_shared = 1;
    s = ucp_init(&params, config, &context);
    ucp_config_release(config);
    if (s != UCS_OK) {
      context = nullptr;
      failure = std::string("UCX did not start: ") + ucs_status_string(s);
    }
  });
  if (context == nullptr) *error = failure;
  return context;
}

// How long a reader keeps driving a send in flight after the worker last
// made progress, before it polls for it once a millisecond.
constexpr std::chrono::milliseconds kDriveSpin{2};

int SpinMicroseconds() {
  static const int spin = [] {
    const char* v = std::getenv("DJAVA_UCX_SPIN_US");
    return v != nullptr ? std::atoi(v) : 50;
  }();
  return spin;
}

}  // namespace

bool ProcessTransport(Transport* transport, std::string* error) {
  int chosen = chosen_transport.load();
  if (chosen >= 0) {
    *transport = static_cast<Transport>(chosen);
    return true;
  }
  const char* env = std::getenv("DJAVA_TRANSPORT");
  if (env == nullptr || env[0] == '\0') {
    *transport = kDefaultTransport;
    return true;
  }
  if (!ParseTransport(env, transport)) {
    *error = std::string("DJAVA_TRANSPORT='") + env + "' is not auto, ucx or tcp";
    return false;
  }
  return true;
}

void SetProcessTransport(Transport transport) {
  chosen_transport.store(static_cast<int>(transport));
}

uint64_t UcxEndpointsOpened() { return endpoints_opened.load(); }

const std::string& UcxHostIdentity() {
  static const std::string identity = [] {
    std::string boot = "unknown-boot";
    if (FILE* f = std::fopen("/proc/sys/kernel/random/boot_id", "r")) {
      char line[64] = "";
      if (std::fgets(line, sizeof line, f) != nullptr) {
        boot = line;
        while (!boot.empty() && (boot.back() == '\n' || boot.back() == ' ')) boot.pop_back();
      }
      std::fclose(f);
    }
    char ns[64] = "";
    ssize_t n = readlink("/proc/self/ns/net", ns, sizeof ns - 1);
    return boot + " " + (n > 0 ? std::string(ns, static_cast<size_t>(n)) : "unknown-net");
  }();
  return identity;
}

bool UcxCanReach(const std::string& mine, const std::string& theirs, std::string* why) {
  const size_t a = mine.find(' '), b = theirs.find(' ');
  if (a == std::string::npos || b == std::string::npos) {
    *why = "the peer did not say where it runs";
    return false;
  }
  const bool same_host = mine.compare(0, a, theirs, 0, b) == 0;
  if (same_host && mine.substr(a) != theirs.substr(b)) {
    *why = "the peer runs on this host in another network namespace, which UCX's "
           "shared-memory wake-ups do not cross";
    return false;
  }
  return true;
}

std::unique_ptr<UcxWorker> UcxWorker::Create(std::string* error) {
  ucp_context_h context = Context(error);
  if (context == nullptr) return nullptr;
  ucp_worker_params_t params{};
  params.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
  // Every call into a worker is under its channel's mutex.
  params.thread_mode = UCS_THREAD_MODE_SERIALIZED;
  ucp_worker_h worker = nullptr;
  ucs_status_t s = ucp_worker_create(context, &params, &worker);
  if (s != UCS_OK) {
    *error = std::string("cannot make a UCX worker: ") + ucs_status_string(s);
    return nullptr;
  }
  ucp_address_t* address = nullptr;
  size_t length = 0;
  s = ucp_worker_get_address(worker, &address, &length);
  if (s != UCS_OK) {
    ucp_worker_destroy(worker);
    *error = std::string("UCX worker has no address: ") + ucs_status_string(s);
    return nullptr;
  }
  std::unique_ptr<UcxWorker> w(new UcxWorker());
  w->worker_ = worker;
  w->address_.assign(reinterpret_cast<const char*>(address), length);
  ucp_worker_release_address(worker, address);
  return w;
}

UcxWorker::~UcxWorker() {
  if (worker_ != nullptr) ucp_worker_destroy(static_cast<ucp_worker_h>(worker_));
}

class UcxChannel : public Channel {
 public:
  UcxChannel(std::unique_ptr<UcxWorker> w, ucp_ep_h ep, int efd, int bootstrap_fd, int wake_fd)
      : owner_(std::move(w)),
        worker_(static_cast<ucp_worker_h>(owner_->worker_)),
        ep_(ep),
        efd_(efd),
        bootstrap_fd_(bootstrap_fd),
        wake_fd_(wake_fd) {}

  ~UcxChannel() override;

  ssize_t TryWrite(const char* data, size_t n, std::string* error) override;
  void WaitWritable(int timeout_ms) override;
  void Flush(int timeout_ms) override;
  ssize_t Read(char* buf, size_t n, std::string* error) override;
  void SetReadTimeout(int milliseconds) override { read_timeout_ms_ = milliseconds; }
  void Shutdown() override;
  const char* name() const override { return "ucx"; }

 private:
  // Bytes handed to UCX and not yet sent: past this, TryWrite takes none
  // (a peer that does not read cannot make this process buffer without
  // bound).
  static constexpr int64_t kMaxInFlight = 8 << 20;

  struct SendBuffer {
    UcxChannel* channel;
    std::string bytes;
  };
  static void OnSent(void* request, ucs_status_t status, void* user_data);

  // Wakes a reader asleep in poll (wake_fd_), to look at shut_ and at
  // the sends in flight.
  void Nudge();
  // Progresses the worker until no more than limit bytes are in flight,
  // timeout_ms passed, or the peer went.
  void DriveWhile(int64_t limit, int timeout_ms);
  // With mu_ held: copies received bytes into buf; 0 when there are none.
  ssize_t TakeReceivedLocked(char* buf, size_t n, std::string* error);

  const std::unique_ptr<UcxWorker> owner_;
  const ucp_worker_h worker_;
  const ucp_ep_h ep_;
  const int efd_;
  const int bootstrap_fd_;
  const int wake_fd_;  // Nudge's

  std::mutex mu_;  // every call into worker_ and ep_
  std::atomic<int64_t> in_flight_{0};
  std::atomic<bool> shut_{false};
  std::atomic<int> read_timeout_ms_{0};
  std::string failure_;  // guarded by mu_: why sends stopped

  // The reader's: received data not yet copied out.
  char* rx_data_ = nullptr;
  size_t rx_length_ = 0;
  size_t rx_offset_ = 0;
  bool peer_gone_ = false;
};

std::unique_ptr<Channel> UcxWorker::Connect(std::unique_ptr<UcxWorker> worker,
                                            const std::string& peer_address, int bootstrap_fd,
                                            std::string* error) {
  ucp_worker_h w = static_cast<ucp_worker_h>(worker->worker_);
  int efd = -1;
  ucs_status_t s = ucp_worker_get_efd(w, &efd);
  if (s != UCS_OK) {
    *error = std::string("UCX worker has no event descriptor: ") + ucs_status_string(s);
    return nullptr;
  }
  ucp_ep_params_t params{};
  params.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS | UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE;
  params.address = reinterpret_cast<const ucp_address_t*>(peer_address.data());
  params.err_mode = UCP_ERR_HANDLING_MODE_NONE;
  ucp_ep_h ep = nullptr;
  s = ucp_ep_create(w, &params, &ep);
  if (s != UCS_OK) {
    *error = std::string("cannot reach the peer over UCX: ") + ucs_status_string(s);
    return nullptr;
  }
  endpoints_opened.fetch_add(1);
  int wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (wake_fd < 0) {
    *error = std::string("eventfd: ") + std::strerror(errno);
    ucp_request_param_t close_params{};
    close_params.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
    close_params.flags = UCP_EP_CLOSE_FLAG_FORCE;
    ucs_status_ptr_t r = ucp_ep_close_nbx(ep, &close_params);
    while (r != nullptr && !UCS_PTR_IS_ERR(r) && ucp_request_check_status(r) == UCS_INPROGRESS) {
      ucp_worker_progress(w);
    }
    if (r != nullptr && !UCS_PTR_IS_ERR(r)) ucp_request_free(r);
    return nullptr;
  }
  return std::make_unique<UcxChannel>(std::move(worker), ep, efd, bootstrap_fd, wake_fd);
}

UcxChannel::~UcxChannel() {
  std::lock_guard<std::mutex> l(mu_);
  if (rx_data_ != nullptr) ucp_stream_data_release(ep_, rx_data_);
  // Flush what is queued for a peer that is still there, but never wait
  // long for one that is not: then force.
  ucp_request_param_t close_params{};
  close_params.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
  close_params.flags = peer_gone_ ? UCP_EP_CLOSE_FLAG_FORCE : 0;
  ucs_status_ptr_t r = ucp_ep_close_nbx(ep_, &close_params);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(200);
  while (r != nullptr && !UCS_PTR_IS_ERR(r) && ucp_request_check_status(r) == UCS_INPROGRESS &&
         std::chrono::steady_clock::now() < deadline) {
    ucp_worker_progress(worker_);
  }
  if (r != nullptr && !UCS_PTR_IS_ERR(r)) {
    if (ucp_request_check_status(r) == UCS_INPROGRESS) ucp_request_cancel(worker_, r);
    ucp_request_free(r);
  }
  // Sends still queued complete (cancelled) here, freeing their buffers.
  for (int i = 0; i < 1000 && in_flight_.load() > 0; i++) ucp_worker_progress(worker_);
  ::close(wake_fd_);
}

void UcxChannel::OnSent(void* request, ucs_status_t, void* user_data) {
  auto* b = static_cast<SendBuffer*>(user_data);
  b->channel->in_flight_.fetch_sub(static_cast<int64_t>(b->bytes.size()));
  delete b;
  ucp_request_free(request);
}

ssize_t UcxChannel::TryWrite(const char* data, size_t n, std::string* error) {
  if (shut_.load()) {
    *error = "send failed: connection shut down";
    return -1;
  }
  if (in_flight_.load() >= kMaxInFlight) return 0;
  // UCX may send later, from its progress: the bytes must outlive the call.
  auto* b = new SendBuffer{this, std::string(data, n)};
  ucp_request_param_t params{};
  params.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
  params.cb.send = &UcxChannel::OnSent;
  params.user_data = b;
  std::lock_guard<std::mutex> l(mu_);
  if (!failure_.empty()) {
    delete b;
    *error = failure_;
    return -1;
  }
  ucs_status_ptr_t r = ucp_stream_send_nbx(ep_, b->bytes.data(), n, &params);
  if (r == nullptr) {
    delete b;  // sent already; the callback is not called
    return static_cast<ssize_t>(n);
  }
  if (UCS_PTR_IS_ERR(r)) {
    delete b;
    failure_ = std::string("UCX send failed: ") + ucs_status_string(UCS_PTR_STATUS(r));
    *error = failure_;
    return -1;
  }
  in_flight_.fetch_add(static_cast<int64_t>(n));
  ucp_worker_progress(worker_);
  // The rest goes out as the worker is driven: a reader asleep on the
  // worker's descriptor must know that it now has sending to drive (a
  // caller like sos-server's Outbox does not wait for it).
  if (in_flight_.load() > 0) Nudge();
  return static_cast<ssize_t>(n);
}

void UcxChannel::WaitWritable(int timeout_ms) { DriveWhile(kMaxInFlight - 1, timeout_ms); }

void UcxChannel::Flush(int timeout_ms) { DriveWhile(0, timeout_ms); }

void UcxChannel::DriveWhile(int64_t limit, int timeout_ms) {
  using Clock = std::chrono::steady_clock;
  const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  auto last_progress = Clock::now();
  while (in_flight_.load() > limit && !shut_.load()) {
    {
      std::lock_guard<std::mutex> l(mu_);
      if (ucp_worker_progress(worker_) != 0) {
        last_progress = Clock::now();
        continue;
      }
    }
    const auto now = Clock::now();
    if (timeout_ms >= 0 && now >= deadline) return;
    // Waiting for the peer to read and make room: at once for a while,
    // then a millisecond at a time (a peer that stopped reading costs no
    // CPU), watching whether it is still there.
    const bool waited_long = now - last_progress > kDriveSpin;
    pollfd p{bootstrap_fd_, POLLIN, 0};
    if (poll(&p, 1, waited_long ? 1 : 0) > 0) return;  // gone or misbehaving: its reader says
    if (!waited_long) sched_yield();
  }
}

ssize_t UcxChannel::TakeReceivedLocked(char* buf, size_t n, std::string* error) {
  if (rx_data_ == nullptr) {
    size_t length = 0;
    ucs_status_ptr_t d = ucp_stream_recv_data_nb(ep_, &length);
    if (d == nullptr) return 0;
    if (UCS_PTR_IS_ERR(d)) {
      *error = std::string("UCX receive failed: ") + ucs_status_string(UCS_PTR_STATUS(d));
      return -1;
    }
    rx_data_ = static_cast<char*>(d);
    rx_length_ = length;
    rx_offset_ = 0;
  }
  size_t k = std::min(n, rx_length_ - rx_offset_);
  std::memcpy(buf, rx_data_ + rx_offset_, k);
  rx_offset_ += k;
  if (rx_offset_ == rx_length_) {
    ucp_stream_data_release(ep_, rx_data_);
    rx_data_ = nullptr;
  }
  return static_cast<ssize_t>(k);
}

ssize_t UcxChannel::Read(char* buf, size_t n, std::string* error) {
  using Clock = std::chrono::steady_clock;
  const int timeout_ms = read_timeout_ms_.load();
  const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  const auto spin = std::chrono::microseconds(SpinMicroseconds());
  auto spin_until = Clock::now() + spin;
  while (true) {
    {
      std::lock_guard<std::mutex> l(mu_);
      ssize_t k = TakeReceivedLocked(buf, n, error);
      if (k != 0) return k;
      if (shut_.load()) return 0;
      if (ucp_worker_progress(worker_) != 0) {
        // Something moved: more may follow soon. A send in flight (a large
        // message, a full queue) moves only while driven: keep at it.
        spin_until = Clock::now() + (in_flight_.load() > 0 ? kDriveSpin : spin);
        continue;
      }
      if (peer_gone_) {
        // Whatever the peer sent before it closed has been taken.
        k = TakeReceivedLocked(buf, n, error);
        return k;
      }
    }
    if (Clock::now() < spin_until) {
      // Any other thread that can run here comes first: on a host with
      // fewer cores than spinning readers, the thread that will send the
      // next message may be waiting for this core.
      sched_yield();
      continue;
    }
    {
      std::lock_guard<std::mutex> l(mu_);
      ucs_status_t s = ucp_worker_arm(worker_);
      if (s == UCS_ERR_BUSY) continue;  // events came meanwhile: progress them
      if (s != UCS_OK) {
        *error = std::string("UCX cannot wait: ") + ucs_status_string(s);
        return -1;
      }
      // A writer's progress (TryWrite, Flush) may have taken a message off
      // the transport since this thread last looked: it waits in the
      // endpoint's queue, and no event will announce it. Anything later
      // signals the armed descriptor.
      ssize_t k = TakeReceivedLocked(buf, n, error);
      if (k != 0) return k;
    }
    pollfd fds[3] = {{efd_, POLLIN, 0}, {bootstrap_fd_, POLLIN, 0}, {wake_fd_, POLLIN, 0}};
    int wait = -1;
    if (in_flight_.load() > 0) wait = 1;  // sends to push along
    if (timeout_ms > 0) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
      if (left.count() <= 0) {
        *error = "timed out waiting for a frame";
        return -1;
      }
      if (wait < 0 || left.count() < wait) wait = static_cast<int>(left.count()) + 1;
    }
    int ready = poll(fds, 3, wait);
    if (ready < 0 && errno != EINTR) {
      *error = std::string("poll failed: ") + std::strerror(errno);
      return -1;
    }
    if (fds[2].revents != 0) {
      if (shut_.load()) return 0;
      uint64_t nudges;
      ssize_t ignored = read(wake_fd_, &nudges, sizeof nudges);  // a writer's Nudge
      (void)ignored;
    }
    if (fds[1].revents != 0) {
      char c;
      ssize_t got = recv(bootstrap_fd_, &c, 1, MSG_DONTWAIT);
      if (got > 0) {
        *error = "unexpected bytes on the TCP connection after the move to UCX";
        return -1;
      }
      if (got == 0 || (errno != EAGAIN && errno != EINTR)) {
        std::lock_guard<std::mutex> l(mu_);
        peer_gone_ = true;
      }
    }
    spin_until = Clock::now() + spin;
  }
}

void UcxChannel::Nudge() {
  uint64_t one = 1;
  ssize_t ignored = write(wake_fd_, &one, sizeof one);
  (void)ignored;
}

void UcxChannel::Shutdown() {
  shut_.store(true);
  Nudge();
  // The peer learns it from its end of the socket.
  shutdown(bootstrap_fd_, SHUT_RDWR);
}

}  // namespace wire
}  // namespace djava
