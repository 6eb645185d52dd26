#include "simulator/judge.h"

#include <string.h>

#include <cctype>

namespace flexkit::sim {

std::string ExitStatus::GoExecError() const {
  if (signal != 0) {
    // Go prints syscall.Signal.String(): glibc's text, lower-cased initial.
    std::string name = ::strsignal(signal);
    if (!name.empty()) name[0] = static_cast<char>(std::tolower(name[0]));
    return "signal: " + name;
  }
  return "exit status " + std::to_string(exit_code);
}

const char* OutcomeName(Outcome outcome) {
  switch (outcome) {
    case Outcome::kSuccess:
      return "success";
    case Outcome::kNotSupported:
      return "not_supported";
    case Outcome::kFailure:
      return "failure";
    case Outcome::kDecodeError:
      return "decode_error";
  }
  return "unknown";
}

namespace {

constexpr std::string_view kSuccess = "Success";
constexpr std::string_view kNotSupported = "Not supported";

void AddStrictWarnings(std::string_view verb, const ExitStatus& exit, const DecodedStatus& d,
                       Verdict& v) {
  auto warn = [&v](std::string w) { v.warnings.push_back(std::move(w)); };
  for (const auto& k : d.notes.non_canonical_keys) {
    warn("key \"" + k + "\" matched only case-insensitively; write it as documented");
  }
  for (const auto& k : d.notes.duplicate_keys) {
    warn("key \"" + k + "\" appears more than once; Go keeps the last");
  }
  if (!d.ok()) return;
  const DriverStatus& s = d.status;
  if (s.status == kNotSupported && !exit.ok()) {
    warn("\"Not supported\" with " + exit.GoExecError() + "; kubelet accepts it, exit 0 is usual");
  }
  if (s.status != kSuccess && s.status != kNotSupported) {
    if (exit.ok()) warn("status \"" + s.status + "\" with exit status 0; a failure should exit 1");
    if (s.status != "Failure") {
      warn("status \"" + s.status +
           "\" is a failure only because it is not Success; use \"Failure\"");
    }
    if (s.message.empty()) warn("failure without a message; kubelet shows an empty reason");
  }
  if (verb == "init") {
    if (!s.capabilities) {
      warn("\"capabilities\": null; kubelet dereferences the nil pointer (panic) on init");
    }
    if (s.status == kNotSupported)
      warn("init answered \"Not supported\"; the driver is not loaded");
  }
  if (verb == "getvolumename" && s.status != kSuccess && s.status != kNotSupported) {
    warn("getvolumename must never fail: it breaks attach, mount and detach of the volume");
  }
}

}  // namespace

Verdict Judge(std::string_view verb, const ExitStatus& exit, std::string_view output) {
  Verdict v;
  if (exit.killed_by_kubelet_timeout && !exit.ok()) {
    v.outcome = Outcome::kFailure;
    v.error = "timeout";
    return v;
  }
  DecodedStatus d = DecodeDriverStatus(output);
  AddStrictWarnings(verb, exit, d, v);
  if (!d.ok()) {
    v.outcome = Outcome::kDecodeError;
    v.error = d.error;
    return v;
  }
  v.status = d.status;
  const std::string& status = d.status.status;
  if (status == kNotSupported) {
    v.outcome = Outcome::kNotSupported;
    v.error = std::string(kNotSupported);
  } else if (status != kSuccess) {
    v.outcome = Outcome::kFailure;
    v.error =
        std::string(verb) + " command failed, status: " + status + ", reason: " + d.status.message;
  } else if (!exit.ok()) {
    v.outcome = Outcome::kFailure;
    v.error = exit.GoExecError();
    v.warnings.push_back("\"Success\" with " + exit.GoExecError() +
                         ": kubelet logs \"driver bug: exec error but no error in response\"");
  } else {
    v.outcome = Outcome::kSuccess;
  }
  return v;
}

}  // namespace flexkit::sim
