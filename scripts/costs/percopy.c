// Per-operation costs of this host's memory system, for the [cpu] figures of a machine
// file (docs/costs.md). One thread, CPU time (CLOCK_THREAD_CPUTIME_ID), so that other
// work on the host does not count. Writes only its own anonymous memory and one 1 MiB
// file in /dev/shm, removed at the end.
//   cc -O2 -o percopy percopy.c && ./percopy
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
static double now(void){struct timespec t;clock_gettime(CLOCK_THREAD_CPUTIME_ID,&t);return t.tv_sec+t.tv_nsec*1e-9;}
static void movsb(void*d,const void*s,size_t n){asm volatile("rep movsb":"+D"(d),"+S"(s),"+c"(n)::"memory");}
static void stosb(void*d,size_t n){asm volatile("rep stosb":"+D"(d),"+c"(n):"a"(0):"memory");}
#define BIG (1024UL<<20)
int main(int argc,char**argv){
  char*big=mmap(0,BIG,PROT_READ|PROT_WRITE,MAP_PRIVATE|MAP_ANONYMOUS|MAP_POPULATE,-1,0);
  char*hot=aligned_alloc(4096,1<<20); memset(hot,1,1<<20); memset(big,2,BIG);
  double t,best;
  // copy_to_user analog: 4 KiB pages from a 1 GiB (DRAM) source to a 1 MiB hot buffer
  best=1e9; for(int r=0;r<3;r++){t=now(); for(size_t o=0;o<BIG;o+=4096) movsb(hot+(o&((1<<20)-1)),big+o,4096); t=now()-t; if(t<best)best=t;}
  printf("copy_out (DRAM page -> hot buf) %.2f GB/s  %.0f ns/page\n",BIG/best/1e9,best/(BIG/4096)*1e9);
  // copy_from_user analog: hot buffer -> 1 GiB destination already mapped
  best=1e9; for(int r=0;r<3;r++){t=now(); for(size_t o=0;o<BIG;o+=4096) movsb(big+o,hot+(o&((1<<20)-1)),4096); t=now()-t; if(t<best)best=t;}
  printf("copy_in (hot buf -> DRAM page) %.2f GB/s  %.0f ns/page\n",BIG/best/1e9,best/(BIG/4096)*1e9);
  best=1e9; for(int r=0;r<3;r++){t=now(); for(size_t o=0;o<BIG;o+=4096) stosb(big+o,4096); t=now()-t; if(t<best)best=t;}
  printf("clear_page (rep stosb) %.2f GB/s  %.0f ns/page\n",BIG/best/1e9,best/(BIG/4096)*1e9);
  munmap(big,BIG);
  // minor anon fault (alloc + zero + LRU add + PTE): touch fresh pages
  size_t N=256UL<<20; best=1e9;
  for(int r=0;r<3;r++){char*a=mmap(0,N,PROT_READ|PROT_WRITE,MAP_PRIVATE|MAP_ANONYMOUS,-1,0); madvise(a,N,MADV_NOHUGEPAGE);
    t=now(); for(size_t o=0;o<N;o+=4096) a[o]=1; t=now()-t; munmap(a,N); if(t<best)best=t;}
  printf("anon fault (alloc+zero+lru+pte) %.0f ns/page\n",best/(N/4096)*1e9);
  // syscall round trip
  long n=2000000; t=now(); for(long i=0;i<n;i++) syscall(SYS_getppid); t=now()-t;
  printf("syscall getppid %.0f ns\n",t/n*1e9);
  // read() of 1 byte from a cached tmpfs file (syscall + fd + lookup + tiny copy)
  char path[64]; snprintf(path,sizeof path,"/dev/shm/percopy.%d",getpid());
  int fd=open(path,O_RDWR|O_CREAT|O_TRUNC,0600); char b[4096]; memset(b,3,4096);
  for(int i=0;i<256;i++) write(fd,b,4096);
  n=1000000; t=now(); for(long i=0;i<n;i++) pread(fd,b,1,(i&255)*4096); t=now()-t;
  printf("pread 1 byte cached %.0f ns\n",t/n*1e9);
  n=500000; t=now(); for(long i=0;i<n;i++) pread(fd,b,4096,(i&255)*4096); t=now()-t;
  printf("pread 4096 cached (hot) %.0f ns\n",t/n*1e9);
  close(fd); unlink(path);
  return 0;
}
