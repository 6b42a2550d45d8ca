// loop_turns.so: an LD_PRELOAD shim that describes an event loop's turns, for any program that
// waits in epoll_wait/epoll_pwait (sluice, nginx, HAProxy, wrk). Per thread it counts turns and
// keeps three log2 histograms: events returned per wait, the busy time between a wait's return
// and the next wait (the turn's work, in ns) and the time spent in the wait (ns). Every 0.5 s
// (and at exit) each process rewrites $LOOP_TURNS_DIR/<comm>.<pid> (default /tmp/loop_turns,
// which must exist) with one block per thread that made at least 10,000 waits.
//
//   gcc -O2 -shared -fPIC -o /tmp/loop_turns.so bench/lib/loop_turns.c -ldl
//   mkdir -p /tmp/loop_turns
//   LD_PRELOAD=/tmp/loop_turns.so TARGETS=sluice bench/run --no-build
//
// A measuring aid (two clock reads per turn), not part of any build or test.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define NB 40
#define MAX_THREADS 64

typedef struct {
  uint64_t turns, events_sum, busy_sum, busy_max, last_return;
  uint64_t events[NB], busy[NB], wait[NB];
  int tid, registered;
} Stats;

static __thread Stats t_stats;
static Stats* all_stats[MAX_THREADS];
static int n_stats;
static uint64_t last_dump;

static uint64_t nowNs(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static int bucket(uint64_t v) {
  int b = 0;
  while (v > 1 && b < NB - 1) {
    v >>= 1;
    ++b;
  }
  return b;
}

static void printHistogram(FILE* f, const char* name, const uint64_t* h) {
  fprintf(f, " %s:", name);
  for (int b = 0; b < NB; ++b) {
    if (h[b] != 0) fprintf(f, " >=%llu:%llu", b == 0 ? 0ull : 1ull << b, (unsigned long long)h[b]);
  }
  fprintf(f, "\n");
}

static void dump(void) {
  char comm[64] = {0}, path[512];
  FILE* f = fopen("/proc/self/comm", "r");
  if (f != NULL) {
    if (fgets(comm, sizeof(comm) - 1, f) == NULL) comm[0] = 0;
    fclose(f);
  }
  comm[strcspn(comm, "\n")] = 0;
  const char* dir = getenv("LOOP_TURNS_DIR");
  snprintf(path, sizeof(path), "%s/%s.%d", dir != NULL ? dir : "/tmp/loop_turns", comm, getpid());
  int n = n_stats < MAX_THREADS ? n_stats : MAX_THREADS;
  int any = 0;
  for (int i = 0; i < n; ++i) any |= all_stats[i]->turns >= 10000;
  if (!any || (f = fopen(path, "w")) == NULL) return;
  for (int i = 0; i < n; ++i) {
    const Stats* s = all_stats[i];
    if (s->turns < 10000) continue;
    fprintf(f, "tid %d turns %llu mean_events %.2f mean_busy_us %.1f max_busy_us %.1f\n", s->tid,
            (unsigned long long)s->turns, (double)s->events_sum / s->turns,
            s->busy_sum / 1e3 / s->turns, s->busy_max / 1e3);
    printHistogram(f, "events/wait", s->events);
    printHistogram(f, "busy ns", s->busy);
    printHistogram(f, "wait ns", s->wait);
  }
  fclose(f);
}

static void before(uint64_t t) {
  if (!t_stats.registered) {
    t_stats.registered = 1;
    t_stats.tid = (int)syscall(SYS_gettid);
    int i = __sync_fetch_and_add(&n_stats, 1);
    if (i < MAX_THREADS) all_stats[i] = &t_stats;
  }
  if (t_stats.last_return != 0) {
    uint64_t busy = t - t_stats.last_return;
    t_stats.busy[bucket(busy)]++;
    t_stats.busy_sum += busy;
    if (busy > t_stats.busy_max) t_stats.busy_max = busy;
  }
}

static void after(uint64_t start, int n) {
  uint64_t t = nowNs();
  t_stats.wait[bucket(t - start)]++;
  t_stats.last_return = t;
  t_stats.turns++;
  t_stats.events[n > 0 ? bucket((uint64_t)n) : 0]++;
  if (n > 0) t_stats.events_sum += (uint64_t)n;
  if (t - last_dump > 500000000u) {
    last_dump = t;
    dump();
  }
}

int epoll_wait(int fd, struct epoll_event* events, int max, int timeout) {
  static int (*real)(int, struct epoll_event*, int, int);
  if (real == NULL)
    real = (int (*)(int, struct epoll_event*, int, int))dlsym(RTLD_NEXT, "epoll_wait");
  uint64_t t = nowNs();
  before(t);
  int n = real(fd, events, max, timeout);
  after(t, n);
  return n;
}

int epoll_pwait(int fd, struct epoll_event* events, int max, int timeout, const sigset_t* mask) {
  static int (*real)(int, struct epoll_event*, int, int, const sigset_t*);
  if (real == NULL) {
    real = (int (*)(int, struct epoll_event*, int, int, const sigset_t*))dlsym(RTLD_NEXT,
                                                                               "epoll_pwait");
  }
  uint64_t t = nowNs();
  before(t);
  int n = real(fd, events, max, timeout, mask);
  after(t, n);
  return n;
}

__attribute__((destructor)) static void atExit(void) { dump(); }
