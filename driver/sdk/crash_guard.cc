#include "driver/sdk/crash_guard.h"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>

#include "driver/sdk/secrets.h"
#include "driver/sdk/status.h"
#include "driver/sdk/write_fully.h"

namespace flexvolume {
namespace {

struct FatalSignal {
  int number;
  const char* name;
};
constexpr FatalSignal kFatalSignals[] = {
    {SIGSEGV, "SIGSEGV"}, {SIGABRT, "SIGABRT"}, {SIGBUS, "SIGBUS"},
    {SIGFPE, "SIGFPE"},   {SIGILL, "SIGILL"},
};

int g_reply_fd = -1;
std::string g_verb;
// The crash reply, rendered at install time (a signal handler may not
// allocate) around the signal's name: head + name + tail.
std::string g_crash_reply_head;
std::string g_crash_reply_tail;
std::atomic<bool> g_replied{false};
std::atomic<int> g_exit_code{1};

void OnFatalSignal(int signo) {
  if (g_replied.exchange(true)) _exit(g_exit_code.load());
  for (const FatalSignal& s : kFatalSignals) {
    if (s.number != signo) continue;
    WriteFully(g_reply_fd, g_crash_reply_head.data(), g_crash_reply_head.size());
    WriteFully(g_reply_fd, s.name, std::strlen(s.name));
    WriteFully(g_reply_fd, g_crash_reply_tail.data(), g_crash_reply_tail.size());
  }
  _exit(1);
}

std::string CurrentExceptionText() {
  std::exception_ptr ep = std::current_exception();
  if (!ep) return "std::terminate was called";
  try {
    std::rethrow_exception(ep);
  } catch (const std::exception& e) {
    return std::string("uncaught exception: ") + e.what();
  } catch (...) {
    return "uncaught exception that is not a std::exception";
  }
}

[[noreturn]] void OnTerminate() {
  if (g_replied.exchange(true)) _exit(g_exit_code.load());
  std::string reply;
  try {
    reply = RenderReply(Fail(SecretRegistry::Global().Redact(
        g_verb + ": the driver failed: " + CurrentExceptionText())));
  } catch (...) {
    reply = "{\"status\":\"Failure\",\"message\":\"the driver failed\"}\n";
  }
  WriteFully(g_reply_fd, reply.data(), reply.size());
  _exit(1);
}

}  // namespace

void InstallCrashGuard(int reply_fd, const std::string& verb) {
  g_reply_fd = reply_fd;
  g_verb = verb.empty() ? "driver" : verb;
  // Signal names need no JSON escaping, so one rendering serves them all.
  const std::string reply = RenderReply(Fail(g_verb + ": the driver crashed (SIG)"));
  const size_t name_at = reply.rfind("SIG)");
  g_crash_reply_head = reply.substr(0, name_at);
  g_crash_reply_tail = reply.substr(name_at + 3);
  // An alternate stack so that a stack overflow still reaches the handler.
  static char alt_stack[64 * 1024];
  stack_t ss{};
  ss.ss_sp = alt_stack;
  ss.ss_size = sizeof alt_stack;
  sigaltstack(&ss, nullptr);

  struct sigaction sa {};
  sa.sa_handler = OnFatalSignal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_ONSTACK | SA_RESETHAND;
  for (const FatalSignal& s : kFatalSignals) sigaction(s.number, &sa, nullptr);
  std::set_terminate(OnTerminate);
}

bool ClaimReply(int exit_code) {
  g_exit_code.store(exit_code);
  return !g_replied.exchange(true);
}

}  // namespace flexvolume
