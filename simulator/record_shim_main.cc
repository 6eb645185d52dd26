// flexsim-record-shim: stands in a real cluster's plugin dir in place of a
// driver (`flexsim record install` puts it there) and records what kubelet
// and the controller really send. It runs the real driver, kept beside it
// as `.<name>.real`, with exactly the argv, environment, working directory
// and stdin it was given, passes the driver's output and exit status
// through unchanged, and appends one JSON line per call to the log named
// in `.<name>.record` (default /var/log/flexsim-record/<folder>.jsonl).
//
// It writes nothing of its own to stdout or stderr, and a log it cannot
// write never changes the call. Secret values (kubernetes.io/secret/*) are
// replaced by "flexsim-redacted" in the argv, the options and the output
// it logs. Statically linked and free of the simulator library, so it
// starts as fast as the driver itself.
#include <fcntl.h>
#include <signal.h>
#include <sys/select.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

extern char** environ;

namespace {

constexpr const char* kRedacted = "flexsim-redacted";
constexpr const char* kSecretPrefix = "kubernetes.io/secret/";
// Decoded secrets shorter than this are too likely to match ordinary text
// to be replaced everywhere in the output; the record counts them instead.
constexpr std::size_t kMinRawSecret = 4;

std::string Dirname(const std::string& path) {
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? "." : (slash == 0 ? "/" : path.substr(0, slash));
}
std::string Basename(const std::string& path) {
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string ReadSmallFile(const std::string& path) {
  std::string text;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return text;
  char buf[4096];
  ssize_t n;
  while ((n = ::read(fd, buf, sizeof buf)) > 0 && text.size() < 65536) text.append(buf, n);
  ::close(fd);
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r' || text.back() == ' '))
    text.pop_back();
  return text;
}

bool WriteAll(int fd, const char* data, std::size_t size) {
  while (size > 0) {
    const ssize_t n = ::write(fd, data, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    data += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

std::string Base64Decode(const std::string& in) {
  static const std::string alphabet =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  unsigned value = 0;
  int bits = -8;
  for (char ch : in) {
    if (ch == '=') break;
    const auto pos = alphabet.find(ch);
    if (pos == std::string::npos) return "";
    value = (value << 6) | static_cast<unsigned>(pos);
    bits += 6;
    if (bits >= 0) {
      out.push_back(static_cast<char>((value >> bits) & 0xff));
      bits -= 8;
    }
  }
  return out;
}

void ReplaceAll(std::string& text, const std::string& what, const std::string& with) {
  if (what.empty()) return;
  for (std::size_t pos = 0; (pos = text.find(what, pos)) != std::string::npos; pos += with.size())
    text.replace(pos, what.size(), with);
}

// The secrets of one call: base64 values as kubelet sent them, and their
// decoded bytes where long enough to replace safely.
struct Secrets {
  std::vector<std::string> encoded;
  std::vector<std::string> raw;
  int too_short = 0;
  std::string Apply(std::string text) const {
    for (const auto& s : encoded) ReplaceAll(text, s, kRedacted);
    for (const auto& s : raw) ReplaceAll(text, s, kRedacted);
    return text;
  }
};

Secrets FindSecrets(const std::vector<std::string>& args) {
  Secrets secrets;
  for (const auto& arg : args) {
    if (arg.empty() || arg.front() != '{') continue;
    auto doc = nlohmann::json::parse(arg, nullptr, false);
    if (!doc.is_object()) continue;
    for (const auto& [key, value] : doc.items()) {
      if (key.rfind(kSecretPrefix, 0) != 0 || !value.is_string()) continue;
      const std::string encoded = value.get<std::string>();
      if (!encoded.empty()) secrets.encoded.push_back(encoded);
      const std::string raw = Base64Decode(encoded);
      if (raw.size() >= kMinRawSecret) {
        secrets.raw.push_back(raw);
      } else if (!raw.empty()) {
        ++secrets.too_short;
      }
    }
  }
  return secrets;
}

std::string Timestamp() {
  const auto now = std::chrono::system_clock::now();
  const auto secs = std::chrono::system_clock::to_time_t(now);
  const auto ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()) % 1000;
  struct tm utc {};
  ::gmtime_r(&secs, &utc);
  char buf[40];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &utc);
  char out[48];
  std::snprintf(out, sizeof out, "%s.%03dZ", buf, static_cast<int>(ms.count()));
  return out;
}

// Only variables that say how the driver was run, never values that may
// hold credentials (a kubelet unit's environment can): the names of all
// variables, and the values of these.
nlohmann::json Environment() {
  static const char* kValuesKept[] = {"PATH", "HOME", "USER", "LANG", "LC_ALL", "TZ", "PWD"};
  nlohmann::json env = nlohmann::json::object();
  nlohmann::json names = nlohmann::json::array();
  for (char** e = environ; e && *e; ++e) {
    const std::string entry = *e;
    const auto eq = entry.find('=');
    const std::string name = entry.substr(0, eq);
    names.push_back(name);
    for (const char* kept : kValuesKept)
      if (name == kept && eq != std::string::npos) env[name] = entry.substr(eq + 1);
  }
  return {{"values", env}, {"names", names}};
}

void AppendRecord(const std::string& log_path, const nlohmann::json& record) {
  std::string line = record.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  const std::string dir = Dirname(log_path);
  ::mkdir(dir.c_str(), 0700);  // the log's folder, if missing; errors surface at open
  const int fd = ::open(log_path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) return;
  WriteAll(fd, line.data(), line.size());  // one write: O_APPEND keeps lines whole
  ::close(fd);
}

bool SamePipe(int a, int b) {
  struct stat sa {
  }, sb{};
  return ::fstat(a, &sa) == 0 && ::fstat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
         sa.st_ino == sb.st_ino;
}

// The real driver beside the shim, and the log its `.<name>.record` names.
struct ShimFiles {
  std::string real, log;
};

ShimFiles FilesBeside(const std::string& self) {
  const std::string dir = Dirname(self), name = Basename(self);
  ShimFiles files{dir + "/." + name + ".real", ReadSmallFile(dir + "/." + name + ".record")};
  if (files.log.empty()) files.log = "/var/log/flexsim-record/" + Basename(dir) + ".jsonl";
  return files;
}

// The signals kubelet (or an operator) sends the driver stay blocked here
// and are read from a signalfd in the copy loop, then forwarded: none is
// lost, whether it arrives before the driver exists or while it runs, and
// no handler runs at an awkward moment (a sanitizer defers handlers until
// its next interceptor, which a select() may never reach).
struct ForwardedSignals {
  sigset_t previous;  // the mask before, which the driver runs with
  int fd;
};

ForwardedSignals BlockForwardedSignals() {
  sigset_t forwarded;
  ForwardedSignals signals{};
  sigemptyset(&forwarded);
  for (int sig : {SIGTERM, SIGINT, SIGHUP, SIGQUIT}) sigaddset(&forwarded, sig);
  ::sigprocmask(SIG_BLOCK, &forwarded, &signals.previous);
  signals.fd = ::signalfd(-1, &forwarded, SFD_CLOEXEC | SFD_NONBLOCK);
  return signals;
}

void ForwardPendingSignals(int signal_fd, pid_t child) {
  signalfd_siginfo info{};
  while (signal_fd >= 0 && ::read(signal_fd, &info, sizeof info) == sizeof info)
    ::kill(child, static_cast<int>(info.ssi_signo));
}

// Forks the driver onto the pipes (err_fd -1: both outputs on out_fd).
// When it cannot fork, the shim becomes the driver, unrecorded.
pid_t StartDriver(const std::string& real, char** argv, int out_fd, int err_fd,
                  const sigset_t& previous) {
  const pid_t child = ::fork();
  if (child == 0) {
    ::dup2(out_fd, STDOUT_FILENO);
    ::dup2(err_fd >= 0 ? err_fd : out_fd, STDERR_FILENO);
    ::sigprocmask(SIG_SETMASK, &previous, nullptr);
    ::execv(real.c_str(), argv);  // argv[0] stays kubelet's path
    _exit(127);
  }
  if (child < 0) {
    ::sigprocmask(SIG_SETMASK, &previous, nullptr);
    ::execv(real.c_str(), argv);
    _exit(127);
  }
  return child;
}

// What the driver wrote: all its bytes, and which stream each read was from
// (only kept when it had two).
struct DriverOutput {
  std::string bytes;
  nlohmann::json chunks = nlohmann::json::array();
};

// Copies both pipes to our own fds as bytes arrive, keeping their order.
DriverOutput CopyOutput(int out_fd, int err_fd, int signal_fd, pid_t child, bool combined) {
  DriverOutput output;
  int open_fds[2] = {out_fd, err_fd};
  while (open_fds[0] >= 0 || open_fds[1] >= 0) {
    fd_set set;
    FD_ZERO(&set);
    int max_fd = signal_fd;
    if (signal_fd >= 0) FD_SET(signal_fd, &set);
    for (int fd : open_fds)
      if (fd >= 0) {
        FD_SET(fd, &set);
        max_fd = std::max(max_fd, fd);
      }
    if (::select(max_fd + 1, &set, nullptr, nullptr, nullptr) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (signal_fd >= 0 && FD_ISSET(signal_fd, &set)) ForwardPendingSignals(signal_fd, child);
    for (int i = 0; i < 2; ++i) {
      if (open_fds[i] < 0 || !FD_ISSET(open_fds[i], &set)) continue;
      char buf[65536];
      const ssize_t n = ::read(open_fds[i], buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        ::close(open_fds[i]);
        open_fds[i] = -1;
        continue;
      }
      WriteAll(i == 0 ? STDOUT_FILENO : STDERR_FILENO, buf, static_cast<std::size_t>(n));
      output.bytes.append(buf, static_cast<std::size_t>(n));
      if (!combined)
        output.chunks.push_back({{"stream", i == 0 ? "stdout" : "stderr"}, {"bytes", n}});
    }
  }
  return output;
}

// The driver closed its output but may still run: keep forwarding.
int WaitForDriver(pid_t child, int signal_fd) {
  int status = 0;
  while (true) {
    const pid_t done = ::waitpid(child, &status, signal_fd >= 0 ? WNOHANG : 0);
    if (done == child || (done < 0 && errno != EINTR)) break;
    if (done == 0) {
      fd_set set;
      FD_ZERO(&set);
      FD_SET(signal_fd, &set);
      timeval tick{0, 20000};
      if (::select(signal_fd + 1, &set, nullptr, nullptr, &tick) > 0)
        ForwardPendingSignals(signal_fd, child);
    }
  }
  return status;
}

nlohmann::json CallRecord(const std::vector<std::string>& args, const DriverOutput& output,
                          int status, std::chrono::steady_clock::duration took, bool combined) {
  const Secrets secrets = FindSecrets(args);
  nlohmann::json logged_args = nlohmann::json::array();
  nlohmann::json options = nullptr;
  for (const auto& arg : args) {
    const std::string redacted = secrets.Apply(arg);
    logged_args.push_back(redacted);
    if (options.is_null() && !redacted.empty() && redacted.front() == '{') {
      auto doc = nlohmann::json::parse(redacted, nullptr, false);
      if (doc.is_object()) options = doc;
    }
  }
  nlohmann::json record = {
      {"time", Timestamp()},
      {"verb", args.empty() ? "" : args.front()},
      {"argv", logged_args},
      {"options", options},
      {"env", Environment()},
      {"durationMs", std::chrono::duration_cast<std::chrono::microseconds>(took).count() / 1000.0},
      {"exit",
       {{"code", WIFEXITED(status) ? WEXITSTATUS(status) : -1},
        {"signal", WIFSIGNALED(status) ? WTERMSIG(status) : 0}}},
      {"output", secrets.Apply(output.bytes)},
      {"combined", combined}};
  if (!combined) record["chunks"] = output.chunks;
  if (secrets.too_short > 0) record["secretsTooShortToRedactInOutput"] = secrets.too_short;
  return record;
}

// Ends as the driver did: killed by the same signal, so the caller sees the
// same status, or with its exit code.
int ExitLikeDriver(int status) {
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    ::sigaction(sig, &dfl, nullptr);
    sigset_t only;
    sigemptyset(&only);
    sigaddset(&only, sig);
    ::sigprocmask(SIG_UNBLOCK, &only, nullptr);
    ::raise(sig);
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

}  // namespace

int main(int argc, char** argv) {
  const auto start = std::chrono::steady_clock::now();
  const ShimFiles files = FilesBeside(argv[0]);

  // kubelet's CombinedOutput hands the driver one pipe as fd 1 and fd 2;
  // the driver gets one pipe too, so it interleaves exactly as it would.
  // Two distinct outputs (a shell) keep two pipes.
  const bool combined = SamePipe(STDOUT_FILENO, STDERR_FILENO);
  int out_pipe[2], err_pipe[2] = {-1, -1};
  if (::pipe2(out_pipe, O_CLOEXEC) != 0) {
    ::execv(files.real.c_str(), argv);  // cannot capture: still run the call unchanged
    _exit(127);
  }
  if (!combined && ::pipe2(err_pipe, O_CLOEXEC) != 0) {
    err_pipe[0] = err_pipe[1] = -1;
  }

  const ForwardedSignals signals = BlockForwardedSignals();
  const pid_t child = StartDriver(files.real, argv, out_pipe[1], err_pipe[1], signals.previous);
  if (signals.fd < 0)
    ::sigprocmask(SIG_SETMASK, &signals.previous, nullptr);  // nothing to read them with
  ::close(out_pipe[1]);
  if (err_pipe[1] >= 0) ::close(err_pipe[1]);

  const DriverOutput output = CopyOutput(out_pipe[0], err_pipe[0], signals.fd, child, combined);
  const int status = WaitForDriver(child, signals.fd);
  // The forwarded signals stay blocked to the end: one arriving now, for a
  // driver already gone, must not kill the shim before the call is logged.
  if (signals.fd >= 0) ::close(signals.fd);
  const auto took = std::chrono::steady_clock::now() - start;

  const std::vector<std::string> args(argv + 1, argv + argc);
  AppendRecord(files.log, CallRecord(args, output, status, took, combined));
  return ExitLikeDriver(status);
}
