#pragma once
// Guarantees one reply per call even when the driver crashes: an uncaught
// exception, std::terminate or a fatal signal (SIGSEGV, SIGABRT, SIGBUS,
// SIGFPE, SIGILL) writes a pre-rendered Failure reply with write(2) and exits
// 1, unless the reply was already written.
#include <string>

namespace flexvolume {

// Installs the handlers; `reply_fd` is where the reply goes, `verb` names the
// call in the crash message.
void InstallCrashGuard(int reply_fd, const std::string& verb);

// Claims the right to write the one reply. Returns false if a crash path
// already wrote it. After a successful claim a later crash writes nothing
// and exits with `exit_code`.
bool ClaimReply(int exit_code);

}  // namespace flexvolume
