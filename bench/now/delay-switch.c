/* delay-switch: the Ethernet switch of bench/now on kernels without netem.
 *
 *   delay-switch TAP...      (run by bench/now/run.py, as root)
 *
 * It creates one tap device per name (in the network namespace it runs in;
 * run.py then moves each tap into its node's namespace) and forwards every
 * frame from one tap to the tap that owns the destination MAC address
 * (learnt from source addresses; unknown and broadcast destinations are
 * flooded), each frame exactly DELAY nanoseconds after it arrived. A frame
 * crosses the switch once per direction, so DELAY is half the round trip
 * run.py asked for.
 *
 * Control on stdin, one line at a time: a number sets DELAY (ns) and is
 * answered "delay N" on stdout; end of input ends the switch, so the switch
 * never outlives run.py (and the kernel removes its taps with it). It prints
 * "ready" once every tap exists.
 *
 * Why C, not Python: the switch's own cost is added to every round trip.
 * With 0 delay, ICMP echo through this switch took 43 us (median, back to
 * back) on these machines, through the same loop in CPython 77 us, through
 * a bare veth pair 27 us. It runs SCHED_FIFO for
 * the same reason: with the thread servers keeping both cores busy, a
 * normal-priority switch would wait for a time slice before forwarding,
 * which no network does (netem runs in the kernel's timer interrupt).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/if.h>
#include <linux/if_tun.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#define MAX_PORTS 64
#define FRAME_MAX 2048   /* taps run at MTU 1500 without offloads: <= 1518 bytes */
#define QUEUE_LEN 8192   /* frames in flight; at 1 ms and 1 Gb/s about 85 */

struct frame {
  long long due;  /* CLOCK_MONOTONIC ns at which it leaves */
  int port;       /* where it came from */
  int len;
  unsigned char bytes[FRAME_MAX];
};

static struct frame queue[QUEUE_LEN];
static int head, tail;  /* ring: head == tail is empty */

static int ports;
static int tap_fd[MAX_PORTS];
static unsigned char tap_mac[MAX_PORTS][6];  /* source address seen on each port */
static int mac_known[MAX_PORTS];

static long long now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1000000000LL + t.tv_nsec;
}

static int open_tap(const char *name) {
  int fd = open("/dev/net/tun", O_RDWR | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    perror("delay-switch: /dev/net/tun");
    exit(1);
  }
  struct ifreq req;
  memset(&req, 0, sizeof req);
  req.ifr_flags = IFF_TAP | IFF_NO_PI;  /* bare Ethernet frames, no offloads */
  snprintf(req.ifr_name, IFNAMSIZ, "%s", name);
  if (ioctl(fd, TUNSETIFF, &req) < 0) {
    fprintf(stderr, "delay-switch: cannot create tap %s: %s\n", name, strerror(errno));
    exit(1);
  }
  return fd;
}

/* How much sooner than a frame is due the switch asks to be woken: the
 * timer's wake-up latency, learnt (an average of the last few timed
 * wake-ups). On these virtual machines a wake from idle takes 40-50 us;
 * without this every frame would leave that much late, and a round trip
 * would grow by twice that on top of the delay asked for. */
static long long early;

static int queue_full(void) { return (tail + 1) % QUEUE_LEN == head; }

/* The frame at the head of the queue leaves: to the port that owns its
 * destination, or to every other port when that is unknown or a group. */
static void forward(const struct frame *f) {
  int to = -1;
  if (!(f->bytes[0] & 1))
    for (int p = 0; p < ports; p++)
      if (mac_known[p] && memcmp(tap_mac[p], f->bytes, 6) == 0) to = p;
  for (int p = 0; p < ports; p++) {
    if (p == f->port || (to >= 0 && p != to) || tap_fd[p] < 0) continue;
    /* A tap that is down or gone refuses the frame: a cable pulled. */
    if (write(tap_fd[p], f->bytes, f->len) < 0 && errno != EIO && errno != EAGAIN)
      fprintf(stderr, "delay-switch: write to port %d: %s\n", p, strerror(errno));
  }
}

/* Reads the frames waiting on a port into the queue, stamped to leave
 * delay ns from now. */
static void receive(int p, long long delay) {
  while (!queue_full()) {
    struct frame *f = &queue[tail];
    ssize_t n = read(tap_fd[p], f->bytes, sizeof f->bytes);
    if (n < 0) {
      if (errno != EAGAIN && errno != EINTR) {
        /* The device is gone (its namespace was deleted): forget the port. */
        close(tap_fd[p]);
        tap_fd[p] = -1;
      }
      return;
    }
    if (n < 14) continue;  /* not an Ethernet frame */
    f->len = (int)n;
    f->port = p;
    f->due = now_ns() + delay;
    memcpy(tap_mac[p], f->bytes + 6, 6);
    mac_known[p] = 1;
    tail = (tail + 1) % QUEUE_LEN;
  }
}

/* Reads control lines from stdin; returns 0 at end of input. */
static int control(long long *delay) {
  static char line[64];
  static size_t used;
  ssize_t n = read(0, line + used, sizeof line - 1 - used);
  if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN)) return 0;
  if (n < 0) return 1;
  used += (size_t)n;
  line[used] = 0;
  char *end;
  while ((end = strchr(line, '\n')) != NULL) {
    *end = 0;
    char *stop;
    long long value = strtoll(line, &stop, 10);
    if (stop != line && value >= 0) {
      *delay = value;
      printf("delay %lld\n", value);
      if (getenv("DJNOW_DEBUG")) fprintf(stderr, "early %lld ns\n", early);
    } else {
      printf("error: not a delay in ns: '%s'\n", line);
    }
    fflush(stdout);
    used -= (size_t)(end + 1 - line);
    memmove(line, end + 1, used + 1);
  }
  if (used == sizeof line - 1) used = 0;  /* a line too long: drop it */
  return 1;
}

int main(int argc, char **argv) {
  if (argc < 2 || argc - 1 > MAX_PORTS) {
    fprintf(stderr, "usage: delay-switch TAP... (at most %d)\n", MAX_PORTS);
    return 2;
  }
  prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
  /* Timers fire when asked, not up to 50 us later (the default slack). */
  prctl(PR_SET_TIMERSLACK, 1, 0, 0, 0);
  struct sched_param param = {.sched_priority = 10};
  if (sched_setscheduler(0, SCHED_FIFO, &param) != 0)
    fprintf(stderr, "delay-switch: no SCHED_FIFO (%s): delays will stretch under load\n",
            strerror(errno));
  ports = argc - 1;
  for (int p = 0; p < ports; p++) tap_fd[p] = open_tap(argv[p + 1]);
  long long delay = 0;
  printf("ready\n");
  fflush(stdout);

  struct pollfd fds[MAX_PORTS + 1];
  for (;;) {
    /* Send what is due. The delay is the same for every frame, so the
     * queue is in order of departure. */
    long long t = now_ns();
    while (head != tail && queue[head].due - early <= t) {
      forward(&queue[head]);
      head = (head + 1) % QUEUE_LEN;
    }
    struct timespec wait, *timeout = NULL;
    long long wake = 0, left = 0;
    if (head != tail) {
      wake = queue[head].due - early;
      left = wake - now_ns();
      if (left < 0) left = 0;
      wait.tv_sec = left / 1000000000LL;
      wait.tv_nsec = left % 1000000000LL;
      timeout = &wait;
    }
    fds[0].fd = 0;
    fds[0].events = POLLIN;
    for (int p = 0; p < ports; p++) {
      fds[p + 1].fd = tap_fd[p];  /* negative: ignored by ppoll */
      /* A full queue reads nothing more: the taps' own queues hold the rest. */
      fds[p + 1].events = queue_full() ? 0 : POLLIN;
    }
    int ready = ppoll(fds, ports + 1, timeout, NULL);
    if (ready < 0) {
      if (errno == EINTR) continue;
      perror("delay-switch: ppoll");
      return 1;
    }
    if (ready == 0 && timeout && left > 0) {  /* a timed wake-up: how late was it? */
      long long late = now_ns() - wake;
      /* Up to 500 us: longer is a preemption, not the timer. */
      if (late >= 0 && late < 500000) early += (late - early) / 8;
      continue;
    }
    if (fds[0].revents && !control(&delay)) return 0;
    for (int p = 0; p < ports; p++) {
      if (tap_fd[p] < 0) continue;
      if (fds[p + 1].revents & (POLLERR | POLLHUP | POLLNVAL)) {
        close(tap_fd[p]);
        tap_fd[p] = -1;
      } else if (fds[p + 1].revents & POLLIN) {
        receive(p, delay);
      }
    }
  }
}
