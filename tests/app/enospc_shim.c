/* Test-only LD_PRELOAD library that simulates a full disk (issue 9, docs/testing.md): writes to
 * files under $ATTNSIM_ENOSPC_DIR succeed until $ATTNSIM_ENOSPC_BYTES bytes in all have been
 * written there by this process; the write that crosses the limit is cut short, and every later
 * one fails with ENOSPC, as on a file system that has just filled up. Deleting files gives no space
 * back (the count is of bytes written, not bytes kept). Writes elsewhere (stdout, /tmp outside the
 * directory) pass through. Intercepts what attnsim's writers use: write, pwrite (HDF5's sec2
 * driver), pwritev, writev, fallocate and posix_fallocate. Never linked into attnsim.
 *
 *   LD_PRELOAD=build/libattnsim_enospc_shim.so ATTNSIM_ENOSPC_DIR=/tmp/x ATTNSIM_ENOSPC_BYTES=4096 \
 *     build/attnsim run ... --out /tmp/x/out.h5
 *
 * When the process exits, it prints "enospc_shim: N writes refused" to stderr if N > 0, so a
 * test can tell that the full disk was really hit. With $ATTNSIM_ENOSPC_LOG set, every write to
 * the directory appends "<bytes written> <file>" to that file (outside the directory), and every
 * refused one "refused <file>", so a test can see which files were written in full. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

static atomic_llong used_bytes;
static atomic_llong refused_writes;

static const char* watched_dir(void) {
  const char* d = getenv("ATTNSIM_ENOSPC_DIR");
  return d && *d ? d : NULL;
}

static long long limit_bytes(void) {
  const char* s = getenv("ATTNSIM_ENOSPC_BYTES");
  return s && *s ? atoll(s) : 0;
}

/* True when `fd` is a file under the watched directory; its path goes to `target`. */
static int watched(int fd, char* target, size_t size) {
  const char* dir = watched_dir();
  if (!dir) return 0;
  char link[64];
  snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  const ssize_t n = readlink(link, target, size - 1);
  if (n <= 0) return 0;
  target[n] = '\0';
  const size_t len = strlen(dir);
  return strncmp(target, dir, len) == 0 && (target[len] == '/' || target[len] == '\0');
}

static void log_write(const char* file, long long bytes); /* bytes < 0: refused */

/* How many of `count` bytes may be written now (0: none, the disk is full). Reserves them. */
static size_t grant(int fd, size_t count) {
  char file[4096];
  if (count == 0 || !watched(fd, file, sizeof file)) return count;
  const long long limit = limit_bytes();
  long long used = atomic_load(&used_bytes);
  for (;;) {
    const long long left = used < limit ? limit - used : 0;
    const long long take = (long long)count < left ? (long long)count : left;
    if (take == 0) {
      atomic_fetch_add(&refused_writes, 1);
      log_write(file, -1);
      return 0;
    }
    if (atomic_compare_exchange_weak(&used_bytes, &used, used + take)) {
      log_write(file, take);
      return (size_t)take;
    }
  }
}

typedef ssize_t (*write_fn)(int, const void*, size_t);
typedef ssize_t (*pwrite_fn)(int, const void*, size_t, off_t);
typedef ssize_t (*writev_fn)(int, const struct iovec*, int);
typedef ssize_t (*pwritev_fn)(int, const struct iovec*, int, off_t);
typedef int (*fallocate_fn)(int, int, off_t, off_t);
typedef int (*posix_fallocate_fn)(int, off_t, off_t);

/* The next definition of `name` (libc's, or a sanitizer's interceptor), looked up once. */
#define REAL(name, type) \
  static type real_##name; \
  if (!real_##name) real_##name = (type)dlsym(RTLD_NEXT, #name)

ssize_t write(int fd, const void* buf, size_t count) {
  REAL(write, write_fn);
  const size_t n = grant(fd, count);
  if (count && !n) { errno = ENOSPC; return -1; }
  return real_write(fd, buf, n);
}

ssize_t pwrite(int fd, const void* buf, size_t count, off_t offset) {
  REAL(pwrite, pwrite_fn);
  const size_t n = grant(fd, count);
  if (count && !n) { errno = ENOSPC; return -1; }
  return real_pwrite(fd, buf, n, offset);
}

ssize_t pwrite64(int fd, const void* buf, size_t count, off_t offset) {
  REAL(pwrite64, pwrite_fn);
  const size_t n = grant(fd, count);
  if (count && !n) { errno = ENOSPC; return -1; }
  return real_pwrite64(fd, buf, n, offset);
}

static size_t iov_bytes(const struct iovec* iov, int iovcnt) {
  size_t total = 0;
  for (int i = 0; i < iovcnt; ++i) total += iov[i].iov_len;
  return total;
}

/* A vectored write over the limit fails as a whole (a short vectored write is legal but rare). */
ssize_t writev(int fd, const struct iovec* iov, int iovcnt) {
  REAL(writev, writev_fn);
  const size_t total = iov_bytes(iov, iovcnt);
  const size_t n = grant(fd, total);
  if (total && n < total) { errno = ENOSPC; return -1; }
  return real_writev(fd, iov, iovcnt);
}

ssize_t pwritev(int fd, const struct iovec* iov, int iovcnt, off_t offset) {
  REAL(pwritev, pwritev_fn);
  const size_t total = iov_bytes(iov, iovcnt);
  const size_t n = grant(fd, total);
  if (total && n < total) { errno = ENOSPC; return -1; }
  return real_pwritev(fd, iov, iovcnt, offset);
}

int fallocate(int fd, int mode, off_t offset, off_t len) {
  REAL(fallocate, fallocate_fn);
  if (len > 0 && grant(fd, (size_t)len) < (size_t)len) { errno = ENOSPC; return -1; }
  return real_fallocate(fd, mode, offset, len);
}

int posix_fallocate(int fd, off_t offset, off_t len) {
  REAL(posix_fallocate, posix_fallocate_fn);
  if (len > 0 && grant(fd, (size_t)len) < (size_t)len) return ENOSPC;
  return real_posix_fallocate(fd, offset, len);
}

static void log_write(const char* file, long long bytes) {
  const char* log = getenv("ATTNSIM_ENOSPC_LOG");
  if (!log || !*log) return;
  char line[4200];
  const int len = bytes < 0 ? snprintf(line, sizeof line, "refused %s\n", file)
                            : snprintf(line, sizeof line, "%lld %s\n", bytes, file);
  const int fd = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return;
  REAL(write, write_fn);
  if (len > 0 && real_write(fd, line, (size_t)len) < 0) { /* a lost log line only */ }
  close(fd);
}

__attribute__((destructor)) static void report(void) {
  const long long n = atomic_load(&refused_writes);
  if (n > 0) {
    char msg[96];
    const int len = snprintf(msg, sizeof msg, "enospc_shim: %lld writes refused\n", n);
    REAL(write, write_fn);
    if (len > 0 && real_write(2, msg, (size_t)len) < 0) return;
  }
}
