#include "conformance/case_watchdog.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <vector>

#include "conformance/leak_audit.h"
#include "platform/read_file.h"

namespace flexkit::conform {
namespace {

// The system calls a stalled harness is usually found in, by the numbers
// /proc/<tid>/syscall gives (this architecture's).
std::string SyscallName(const std::string& syscall_line) {
  if (syscall_line.empty()) return "";
  if (syscall_line == "running") return "running";
  static const std::map<long, const char*> kNames = {
      {SYS_read, "read"},
      {SYS_write, "write"},
      {SYS_ppoll, "ppoll"},
      {SYS_pselect6, "pselect6"},
      {SYS_epoll_pwait, "epoll_pwait"},
      {SYS_nanosleep, "nanosleep"},
      {SYS_clock_nanosleep, "clock_nanosleep"},
      {SYS_futex, "futex"},
      {SYS_wait4, "wait4"},
      {SYS_waitid, "waitid"},
      {SYS_mount, "mount"},
      {SYS_umount2, "umount2"},
      {SYS_setns, "setns"},
      {SYS_unshare, "unshare"},
      {SYS_execve, "execve"},
      {SYS_clone, "clone"},
      {SYS_accept4, "accept4"},
      {SYS_connect, "connect"},
      {SYS_recvfrom, "recvfrom"},
      {SYS_sendto, "sendto"},
      {SYS_fcntl, "fcntl"},
      {SYS_flock, "flock"},
      {SYS_openat, "openat"},
      {SYS_close, "close"},
#ifdef SYS_poll  // the calls that newer architectures only have in their p-/at- forms
      {SYS_poll, "poll"},
      {SYS_select, "select"},
      {SYS_pause, "pause"},
      {SYS_epoll_wait, "epoll_wait"},
      {SYS_vfork, "vfork"},
      {SYS_open, "open"},
#endif
  };
  const long number = std::strtol(syscall_line.c_str(), nullptr, 10);
  auto it = kNames.find(number);
  return it == kNames.end() ? "syscall " + std::to_string(number) : it->second;
}

// "in pipe_read (read)": where a task sleeps in the kernel, and the call.
std::string TaskWait(const std::string& task_dir) {
  const std::string wchan = platform::ReadFirstLine(task_dir + "/wchan");
  const std::string call = SyscallName(platform::ReadFirstLine(task_dir + "/syscall"));
  std::string out = wchan.empty() || wchan == "0" ? "running" : "in " + wchan;
  if (!call.empty() && call != "running") out += " (" + call + ")";
  return out;
}

}  // namespace

ProgressMark::ProgressMark(sim::ProcessRunner& inner, const std::string& path)
    : inner_(inner), fd_(::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)) {
  Mark("no driver call yet");
}

ProgressMark::~ProgressMark() {
  if (fd_ >= 0) ::close(fd_);
}

void ProgressMark::Mark(const std::string& text) {
  if (fd_ < 0) return;  // no mark: the runner judges by the case's start
  // The write sets the file's time, which the runner reads; the text says
  // what happened then (a failed truncate only leaves an older tail).
  const bool marked =
      ::pwrite(fd_, text.data(), text.size(), 0) == static_cast<ssize_t>(text.size()) &&
      ::ftruncate(fd_, static_cast<off_t>(text.size())) == 0;
  static_cast<void>(marked);
}

sim::ProcessResult ProgressMark::Run(const sim::ProcessSpec& spec) {
  const std::string verb = spec.args.empty() ? "" : spec.args.front();
  const std::string what = verb.size() <= 40 ? " (" + verb + ")" : "";
  std::string call;
  {
    std::lock_guard lock(mutex_);
    call = "call " + std::to_string(++calls_) + what;
    Mark(call + " started");
  }
  sim::ProcessResult result = inner_.Run(spec);
  std::lock_guard lock(mutex_);
  Mark(call + " ended");
  return result;
}

std::optional<Progress> ReadProgress(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return std::nullopt;
  Progress p;
  p.at =
      std::chrono::system_clock::time_point(std::chrono::duration_cast<std::chrono::microseconds>(
          std::chrono::seconds(st.st_mtim.tv_sec) + std::chrono::nanoseconds(st.st_mtim.tv_nsec)));
  p.last = platform::ReadFirstLine(path);
  return p;
}

std::chrono::milliseconds StallLimit(const DriverProfile& profile) {
  sim::Millis longest = profile.default_timeout;
  for (const auto& [verb, timeout] : profile.verb_timeouts) longest = std::max(longest, timeout);
  const sim::Millis hook =
      profile.fixture.kind == "command" ? profile.fixture.hook_timeout : sim::Millis{0};
  return longest + hook + std::chrono::minutes(1);
}

std::string StallOf(const std::optional<Progress>& progress,
                    std::chrono::system_clock::time_point started_at,
                    std::chrono::system_clock::time_point now, std::chrono::milliseconds limit) {
  const auto quiet = now - (progress ? progress->at : started_at);
  if (quiet < limit) return "";
  return "no driver call started or ended for " +
         std::to_string(std::chrono::duration_cast<std::chrono::seconds>(quiet).count()) +
         " s (the last mark: " + (progress ? progress->last : "none") + ")";
}

std::string DescribeWaits(pid_t pid) {
  std::ostringstream out;
  const std::string proc = "/proc/" + std::to_string(pid);
  std::vector<pid_t> tids;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(proc + "/task", ec))
    tids.push_back(static_cast<pid_t>(std::stol(e.path().filename().string())));
  std::sort(tids.begin(), tids.end());
  out << "its threads: ";
  for (std::size_t i = 0; i < tids.size(); ++i) {
    out << (i ? "; " : "") << tids[i] << " " << TaskWait(proc + "/task/" + std::to_string(tids[i]));
  }
  const std::set<pid_t> children = Descendants(pid);
  if (children.empty()) {
    out << "; it had no process running";
    return out.str();
  }
  out << "; its processes: ";
  bool first = true;
  for (pid_t child : children) {
    const auto stat = ReadProcStat(child);
    out << (first ? "" : "; ") << child << " " << CommandLine(child) << " ["
        << (stat ? stat->state : '?') << "] " << TaskWait("/proc/" + std::to_string(child));
    first = false;
  }
  return out.str();
}

}  // namespace flexkit::conform
