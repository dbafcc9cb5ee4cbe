/*
 * LD_PRELOAD shim for dev/shaped-link --server-pacing: sets SO_MAX_PACING_RATE on every socket
 * the process accepts or connects (with --shuffle both ends send: iperf3 --bidir's client as its
 * server, and each executor as a server), which turns on the kernel's own TCP pacing (since
 * Linux 4.13) at the congestion control's pacing rate, capped by the value given: what `fq` on
 * the sender's host does, for kernels built without fq and for a JVM, which cannot set the
 * option itself.
 *
 * GD_MAX_PACING_RATE: the cap in bytes per second (default 2^40: no cap below TCP's own rate;
 * ~0 would leave pacing off, which is why the default is finite).
 *   cc -O2 -shared -fPIC -o pacing-shim.so dev/pacing-shim.c -ldl
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/socket.h>

#ifndef SO_MAX_PACING_RATE
#define SO_MAX_PACING_RATE 47
#endif

static void pace(int fd) {
  if (fd < 0) {
    return;
  }
  const char *given = getenv("GD_MAX_PACING_RATE");
  uint64_t rate = given != NULL && *given != '\0' ? strtoull(given, NULL, 10) : (uint64_t) 1 << 40;
  /* Best effort: a socket that is not TCP keeps its behaviour. */
  setsockopt(fd, SOL_SOCKET, SO_MAX_PACING_RATE, &rate, sizeof rate);
}

int accept(int fd, struct sockaddr *addr, socklen_t *len) {
  static int (*real)(int, struct sockaddr *, socklen_t *);
  if (real == NULL) {
    real = (int (*)(int, struct sockaddr *, socklen_t *)) dlsym(RTLD_NEXT, "accept");
  }
  int s = real(fd, addr, len);
  pace(s);
  return s;
}

int accept4(int fd, struct sockaddr *addr, socklen_t *len, int flags) {
  static int (*real)(int, struct sockaddr *, socklen_t *, int);
  if (real == NULL) {
    real = (int (*)(int, struct sockaddr *, socklen_t *, int)) dlsym(RTLD_NEXT, "accept4");
  }
  int s = real(fd, addr, len, flags);
  pace(s);
  return s;
}

int connect(int fd, const struct sockaddr *addr, socklen_t len) {
  static int (*real)(int, const struct sockaddr *, socklen_t);
  if (real == NULL) {
    real = (int (*)(int, const struct sockaddr *, socklen_t)) dlsym(RTLD_NEXT, "connect");
  }
  pace(fd);
  return real(fd, addr, len);
}
