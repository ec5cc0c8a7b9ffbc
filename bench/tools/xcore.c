// The thirty-second round's canary: does the cost of moving data between the VM's two cores change over time?
// Every 2 s two threads, pinned one to each CPU and SCHED_FIFO so that both run at once (about 1-2 ms of each
// core per sample), time a cache-line round trip between the cores (2,000 of them), then 8 copies of a
// 256 KiB buffer that the other core has just written, against a copy of one that the copying core wrote
// itself. While the file named by the first argument is missing, it sleeps instead. The host may place the
// two vCPUs on cores that share a last-level cache or on cores that do not; a proxy's copies of socket
// buffers that a peer process on the other core has just written expect the first.
// bench/run.sh builds it and the harness runs it beside the streaming windows (CoreCanary); by hand:
//   gcc -O2 -pthread -o /tmp/xcore bench/tools/xcore.c && /tmp/xcore /tmp/active > /tmp/xcore.log &   (as root)
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define TRIPS 2000
#define COPIES 8
#define BUF (256 * 1024)

enum { PING, WRITE };
// The partner serves each odd value of seq (doing op) by making it even; CPU 0 makes it odd again.
static _Atomic long seq;
static _Atomic int op;
static _Atomic int sampling = -1; // 1: a sample is under way; 0: between samples; -1: the gate is closed
static unsigned char *shared_buf, *dst, *own;
static double rtt[TRIPS];

static double now_ns(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1e9 + t.tv_nsec; }
static int cmp(const void *a, const void *b) { double x = *(const double *)a, y = *(const double *)b; return (x > y) - (x < y); }
static void pin(int cpu, int fifo) {
  cpu_set_t s; CPU_ZERO(&s); CPU_SET(cpu, &s); pthread_setaffinity_np(pthread_self(), sizeof s, &s);
  struct sched_param p = {.sched_priority = fifo ? 10 : 0};
  pthread_setschedparam(pthread_self(), fifo ? SCHED_FIFO : SCHED_OTHER, &p);
}

static void *partner(void *arg) {
  (void)arg; pin(1, 1);
  for (long served = 0;;) {
    long v;
    // Spin while a sample is under way, else sleep: a real-time thread must not spin between samples.
    while ((v = atomic_load_explicit(&seq, memory_order_acquire)) == served) if (atomic_load(&sampling) < 1) usleep(atomic_load(&sampling) ? 100000 : 2000);
    if (atomic_load_explicit(&op, memory_order_relaxed) == WRITE) memset(shared_buf, v & 0xff, BUF); // dirty on CPU 1
    served = v + 1;
    atomic_store_explicit(&seq, served, memory_order_release);
  }
  return NULL;
}

// One request to the partner; returns when it is served.
static void ask(int what) {
  atomic_store_explicit(&op, what, memory_order_relaxed);
  long v = atomic_fetch_add_explicit(&seq, 1, memory_order_acq_rel) + 1;
  while (atomic_load_explicit(&seq, memory_order_acquire) != v + 1) {}
}

int main(int argc, char **argv) {
  const char *gate = argc > 1 ? argv[1] : NULL;
  shared_buf = aligned_alloc(4096, BUF); dst = aligned_alloc(4096, BUF); own = aligned_alloc(4096, BUF);
  memset(shared_buf, 0, BUF); memset(dst, 0, BUF); memset(own, 0, BUF);
  pthread_t t; pthread_create(&t, NULL, partner, NULL);
  for (int round = 1;; round++) {
    while (gate && access(gate, F_OK) != 0) { atomic_store(&sampling, -1); usleep(200000); }
    pin(0, 1);
    atomic_store(&sampling, 1);
    ask(PING); // wakes the partner
    for (int i = 0; i < TRIPS; i++) { double t0 = now_ns(); ask(PING); rtt[i] = now_ns() - t0; }
    double xcopy[COPIES];
    for (int c = 0; c < COPIES; c++) {
      ask(WRITE);
      double t1 = now_ns(); memcpy(dst, shared_buf, BUF); xcopy[c] = now_ns() - t1;
    }
    memset(own, round & 0xff, BUF);
    double t3 = now_ns(); memcpy(dst, own, BUF); double local = now_ns() - t3;
    atomic_store(&sampling, 0);
    pin(0, 0);
    qsort(rtt, TRIPS, sizeof rtt[0], cmp);
    qsort(xcopy, COPIES, sizeof xcopy[0], cmp);
    time_t wall = time(NULL); struct tm tm; localtime_r(&wall, &tm);
    printf("T %02d:%02d:%02d rtt_ns_p10=%.0f rtt_ns_p50=%.0f xcopy_ns_per_KiB=%.1f localcopy_ns_per_KiB=%.1f\n",
           tm.tm_hour, tm.tm_min, tm.tm_sec, rtt[TRIPS / 10], rtt[TRIPS / 2], xcopy[COPIES / 2] / (BUF / 1024), local / (BUF / 1024));
    fflush(stdout);
    sleep(2);
  }
}
