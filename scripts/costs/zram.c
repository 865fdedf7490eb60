// zram's compressors on this host, per 4 KiB page (docs/costs.md): lzo1x_1, lz4 at
// acceleration 1 and zstd level 3, compress and decompress, CPU time of one thread, best of
// three. Reads two 16 MiB samples made beforehand in the current directory:
//   head -c 16M /dev/urandom > rnd; cat /usr/bin/* | head -c 16M > bin
//   cc -O2 -o zram zram.c -llz4 -lzstd -llzo2 && ./zram
// (Debian: liblz4-dev libzstd-dev liblzo2-dev.)
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <lz4.h>
#include <zstd.h>
#include <lzo/lzo1x.h>
static double now(void){struct timespec t;clock_gettime(CLOCK_THREAD_CPUTIME_ID,&t);return t.tv_sec+t.tv_nsec*1e-9;}
#define N 4096
static char wrk[LZO1X_1_MEM_COMPRESS];
static ZSTD_CCtx*cc; static ZSTD_DCtx*dc;
static int comp(int a,const char*in,char*out){ if(a==0){lzo_uint ol; lzo1x_1_compress((const unsigned char*)in,4096,(unsigned char*)out,&ol,wrk); return ol;}
  if(a==1) return LZ4_compress_default(in,out,4096,8192); return ZSTD_compressCCtx(cc,out,8192,in,4096,3);}
static void decomp(int a,const char*in,int n,char*out){ if(a==0){lzo_uint bl=4096; lzo1x_decompress_safe((const unsigned char*)in,n,(unsigned char*)out,&bl,NULL);}
  else if(a==1) LZ4_decompress_safe(in,out,n,4096); else ZSTD_decompressDCtx(dc,out,4096,in,n);}
int main(){
  const char*names[]={"rnd","bin"}; const char*an[]={"lzo","lz4","zstd3"};
  lzo_init(); cc=ZSTD_createCCtx(); dc=ZSTD_createDCtx();
  char*outs=malloc((size_t)N*8192); int*len=malloc(N*sizeof(int)); char*back=malloc(4096);
  for(int f=0;f<2;f++){ FILE*fp=fopen(names[f],"rb"); char*buf=malloc((size_t)N*4096); fread(buf,4096,N,fp); fclose(fp);
    for(int a=0;a<3;a++){ double bc=1e9,bd=1e9; long tot=0;
      for(int r=0;r<3;r++){ double t=now(); tot=0; for(int i=0;i<N;i++){len[i]=comp(a,buf+(size_t)i*4096,outs+(size_t)i*8192); tot+=len[i];} t=now()-t; if(t<bc)bc=t;
        t=now(); for(int i=0;i<N;i++){ if(len[i]<4096) decomp(a,outs+(size_t)i*8192,len[i],back); else memcpy(back,buf+(size_t)i*4096,4096);} t=now()-t; if(t<bd)bd=t; }
      printf("%-4s %-5s c %6.0f ns  d %6.0f ns  ratio %.2f\n",names[f],an[a],bc/N*1e9,bd/N*1e9,(double)N*4096/tot);}
    free(buf);}
}
