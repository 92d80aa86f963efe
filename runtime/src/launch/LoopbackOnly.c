/*===- LoopbackOnly.c - A local job's listeners on the loopback only ------===//
 *
 * libLoomLoopbackOnly.so is preloaded (LD_PRELOAD) into the mpiexec that
 * `loom-run --ranks N` starts, and so into its ranks. Open MPI 4.1's
 * mpiexec binds its out-of-band TCP listeners to INADDR_ANY and
 * in6addr_any whatever oob_tcp_if_include says (only the addresses it
 * advertises follow that setting; orte/mca/oob/tcp/oob_tcp_listener.c), so
 * a job that runs on one machine would listen on every interface. Every
 * process of such a job is on this machine: a socket bound to "any address"
 * is bound to the loopback address of its family instead, and the job
 * listens on nothing another machine can reach (reliability scenario 19).
 * The launcher preloads it only with its own defaults in force (shared
 * memory between ranks, mpiexec's channel advertised on `lo`), which
 * reach nothing but the loopback anyway.
 *
 * Plain C and libc: it is loaded into processes that are not Loom's.
 *
 *===----------------------------------------------------------------------===*/
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>

typedef int (*BindFunction)(int, const struct sockaddr *, socklen_t);

__attribute__((visibility("default"))) int
bind(int fd, const struct sockaddr *address, socklen_t length) {
  static BindFunction next;
  BindFunction real = __atomic_load_n(&next, __ATOMIC_ACQUIRE);
  if (!real) {
    real = (BindFunction)dlsym(RTLD_NEXT, "bind");
    if (!real) {
      errno = ENOSYS;
      return -1;
    }
    __atomic_store_n(&next, real, __ATOMIC_RELEASE);
  }
  if (address && address->sa_family == AF_INET &&
      length >= sizeof(struct sockaddr_in)) {
    struct sockaddr_in in;
    memcpy(&in, address, sizeof in);
    if (in.sin_addr.s_addr == htonl(INADDR_ANY)) {
      in.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      return real(fd, (const struct sockaddr *)&in, sizeof in);
    }
  } else if (address && address->sa_family == AF_INET6 &&
             length >= sizeof(struct sockaddr_in6)) {
    struct sockaddr_in6 in6;
    memcpy(&in6, address, sizeof in6);
    if (IN6_IS_ADDR_UNSPECIFIED(&in6.sin6_addr)) {
      in6.sin6_addr = in6addr_loopback;
      return real(fd, (const struct sockaddr *)&in6, sizeof in6);
    }
  }
  return real(fd, address, length);
}
