// The thirty-first round's canary: every 2 s it prints the CPU time (not wall time) of a fixed arithmetic loop
// and of a fixed pointer chase through 64 MiB. If a slow state of the benchmarks were the host's (its clock, a
// busy sibling thread, a shared cache), these would slow down with it; they did not.
//   gcc -O2 -o /tmp/canary bench/tools/canary.c && /tmp/canary > /tmp/canary.log &
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>
static double cpu_ns(void){struct timespec t;clock_gettime(CLOCK_THREAD_CPUTIME_ID,&t);return t.tv_sec*1e9+t.tv_nsec;}
int main(void){
  size_t n=(64u<<20)/sizeof(uint32_t); uint32_t *next=malloc(n*sizeof(uint32_t));
  for(size_t i=0;i<n;i++) next[i]=i;
  srand(7); for(size_t i=n-1;i>0;i--){size_t j=((size_t)rand()*RAND_MAX+rand())%i; uint32_t t=next[i];next[i]=next[j];next[j]=t;} // Sattolo: one cycle
  uint32_t p=0; volatile uint64_t sink=0;
  for(;;){
    double t0=cpu_ns(); uint64_t x=1; for(int i=0;i<3000000;i++) x=x*6364136223846793005ULL+1442695040888963407ULL; sink+=x;
    double t1=cpu_ns(); for(int i=0;i<100000;i++) p=next[p]; sink+=p;
    double t2=cpu_ns();
    time_t now=time(NULL); struct tm tm; localtime_r(&now,&tm);
    printf("T %02d:%02d:%02d compute_ns_per_iter=%.3f chase_ns_per_step=%.1f\n",tm.tm_hour,tm.tm_min,tm.tm_sec,(t1-t0)/3e6,(t2-t1)/1e5);
    fflush(stdout); sleep(2);
  }
}
