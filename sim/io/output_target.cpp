#include "sim/io/output_target.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <vector>

#include "sim/io/durable_write.h"

namespace attnsim::io {

namespace fs = std::filesystem;

namespace {

std::string kind_of(mode_t m) {
  if (S_ISREG(m)) return "a regular file";
  if (S_ISDIR(m)) return "a directory";
  if (S_ISCHR(m)) return "a character device";
  if (S_ISBLK(m)) return "a block device";
  if (S_ISFIFO(m)) return "a FIFO";
  if (S_ISSOCK(m)) return "a socket";
  if (S_ISLNK(m)) return "a symbolic link";
  return "a special file";
}

bool is_stream(mode_t m) { return S_ISCHR(m) || S_ISFIFO(m); }

// Follows symbolic links from `path` to the name they finally lead to, which may not exist (a
// dangling link). Relative link contents are taken from the link's directory.
std::string follow_links(const std::string& path, const std::string& shown) {
  std::string p = path;
  for (int hops = 0; hops <= 40; ++hops) {
    struct stat st {};
    if (::lstat(p.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) return p;
    std::vector<char> buf(PATH_MAX + 1);
    const ssize_t n = ::readlink(p.c_str(), buf.data(), buf.size() - 1);
    if (n < 0) throw output_error(shown, errno, "cannot read the symbolic link");
    const std::string link(buf.data(), static_cast<std::size_t>(n));
    const fs::path dir = fs::path(p).parent_path();
    p = (link.empty() || link[0] == '/' || dir.empty()) ? link : (dir / link).string();
  }
  throw output_error(shown, ELOOP, "cannot follow");
}

[[noreturn]] void refuse(const std::string& path, const std::string& what, const std::string& via = "") {
  std::string msg = "is " + (via.empty() ? what : via + " to " + what);
  if (what == "a directory")
    msg += "; give a file name such as " + (fs::path(path) / "out.h5").string();
  else
    msg += "; an output must be a regular file (replaced), a character device or a FIFO (written through)";
  throw OutputError(path, msg);
}

}  // namespace

OutputTarget resolve_output(const std::string& path) {
  if (path.empty()) throw OutputError("", "empty output path");
  OutputTarget t;
  t.path = path;
  struct stat lst {}, st {};
  const bool is_link = ::lstat(path.c_str(), &lst) == 0 && S_ISLNK(lst.st_mode);
  if (::stat(path.c_str(), &st) == 0) {  // exists; links followed (also /proc/self/fd/N)
    t.what = kind_of(st.st_mode);
    if (is_stream(st.st_mode)) {
      if (::access(path.c_str(), W_OK) != 0) throw output_error(path, errno);
      t.kind = OutputTarget::Kind::kStream;
      t.target = path;
      return t;
    }
    if (!S_ISREG(st.st_mode)) refuse(path, t.what, is_link ? "a symbolic link" : "");
    t.target = is_link ? follow_links(path, path) : path;
  } else if (errno == ELOOP) {
    throw output_error(path, ELOOP, "cannot follow");
  } else {
    t.what = is_link ? "a dangling symbolic link" : "a new file";
    t.target = is_link ? follow_links(path, path) : path;
  }
  // A regular file or a name to create: its directory must be there and writable.
  fs::path dir = fs::path(t.target).parent_path();
  if (dir.empty()) dir = ".";
  struct stat ds {};
  if (::stat(dir.c_str(), &ds) != 0 || !S_ISDIR(ds.st_mode)) {
    if (is_link)
      throw OutputError(path, "is a dangling symbolic link to " + t.target + ", whose directory " + dir.string() +
                                  " does not exist");
    // A file where a directory should be ("f/out.h5" with f a file) is not a missing directory.
    for (fs::path up = dir; !up.empty(); up = up.parent_path()) {
      struct stat us {};
      if (::stat(up.c_str(), &us) == 0 && !S_ISDIR(us.st_mode))
        throw OutputError(path, up.string() + " is a file, not a directory");
      if (up == up.parent_path()) break;
    }
    throw OutputError(path, "directory " + dir.string() + " does not exist");
  }
  if (::access(dir.c_str(), W_OK) != 0) throw OutputError(path, "directory " + dir.string() + " is not writable");
  return t;
}

namespace {

// The finished bytes into a character device or FIFO, once (a FIFO: blocks until a reader opens
// it). SIGPIPE is held back for this thread, so a reader that went away is an error (EPIPE).
void write_stream(const std::string& path, const void* data, std::size_t size) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) throw output_error(path, errno);
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !is_stream(st.st_mode)) {  // replaced since it was resolved
    const std::string what = kind_of(st.st_mode);
    ::close(fd);
    throw OutputError(path, "changed to " + what + " while the result was being made; nothing written");
  }
  sigset_t pipe_set, old;
  sigemptyset(&pipe_set);
  sigaddset(&pipe_set, SIGPIPE);
  sigset_t pending;
  sigpending(&pending);
  const bool was_pending = sigismember(&pending, SIGPIPE) == 1;
  pthread_sigmask(SIG_BLOCK, &pipe_set, &old);
  const char* p = static_cast<const char*>(data);
  std::size_t done = 0;
  int err = 0;
  while (done < size) {
    const ssize_t n = ::write(fd, p + done, size - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      err = n < 0 ? errno : EIO;
      break;
    }
    done += static_cast<std::size_t>(n);
  }
  if (err == EPIPE && !was_pending) {  // consume the SIGPIPE this write raised
    const timespec zero{0, 0};
    sigtimedwait(&pipe_set, nullptr, &zero);
  }
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  if (::close(fd) != 0 && err == 0 && errno != EINTR) err = errno;
  if (err) throw output_error(path, err);
}

}  // namespace

void write_output(const std::string& path, const void* data, std::size_t size) {
  const OutputTarget t = resolve_output(path);
  if (t.kind == OutputTarget::Kind::kStream) return write_stream(path, data, size);
  TemporaryFile tmp(t.target + ".tmp-" + std::to_string(::getpid()), path);
  tmp.write_all(data, size);
  // Renamed only over what it was resolved to: a regular file or nothing (not a device or FIFO
  // that appeared meanwhile).
  struct stat st {};
  if (::lstat(t.target.c_str(), &st) == 0 && !S_ISREG(st.st_mode))
    throw OutputError(path, "changed to " + kind_of(st.st_mode) + " while the result was being made; nothing written");
  tmp.commit(t.target);
}

std::string journal_dir_for(const std::string& path) {
  OutputTarget t;
  try {
    t = resolve_output(path);
  } catch (const OutputError&) {
    return path + ".partial";  // refused anyway before a journal is made
  }
  if (t.kind == OutputTarget::Kind::kFile) return t.target + ".partial";
  const std::string abs = fs::absolute(path).lexically_normal().string();
  std::uint64_t h = 1469598103934665603ull;  // FNV-1a: the same name in every run
  for (unsigned char c : abs) h = (h ^ c) * 1099511628211ull;
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h));
  const char* tmpdir = std::getenv("TMPDIR");
  const fs::path base = tmpdir && *tmpdir ? fs::path(tmpdir) : fs::path("/tmp");
  return (base / ("attnsim-" + fs::path(path).filename().string() + "-" + hex + ".partial")).string();
}

}  // namespace attnsim::io
