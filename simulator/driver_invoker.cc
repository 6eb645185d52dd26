#include "simulator/driver_invoker.h"

namespace flexkit::sim {
namespace {

std::vector<std::string> RedactedArgv(const std::string& executable, const Args& args,
                                      const Redactor& redactor) {
  std::vector<std::string> argv{executable};
  for (const auto& a : args) argv.push_back(redactor.Apply(a));
  return argv;
}

MountTable Snapshot(Node& node) {
  if (!node.running()) return std::make_shared<const std::vector<MountEntry>>();
  return node.Mounts();
}

}  // namespace

CallResult DriverInvoker::Call(Node& node, const std::string& component,
                               const std::string& executable, const Args& args,
                               const Redactor& redactor) {
  const std::string verb = args.empty() ? "" : args[0];
  ProcessSpec spec;
  spec.executable = executable;
  spec.args = args;
  spec.env_overrides = node.env();
  spec.namespace_fd = node.namespace_fd();
  if (verb == "waitforattach") spec.kubelet_timeout = settings_.waitforattach_timeout;
  spec.harness_deadline = settings_.harness_deadline;
  spec.held_open_grace = settings_.held_open_grace;
  spec.output_cap = settings_.output_cap;

  auto before = Snapshot(node);
  ProcessResult process = runner_.Run(spec);
  auto after = Snapshot(node);

  CallResult result;
  if (process.harness_deadline_hit && process.exit.killed_by_kubelet_timeout) {
    result.harness_problem =
        "would hang kubelet: " + verb + " ignored kubelet's SIGTERM at its " +
        std::to_string(settings_.waitforattach_timeout.count()) +
        " ms timeout and was still running after " +
        std::to_string(settings_.harness_deadline.count()) +
        " ms; kubelet never sends SIGKILL (k8s.io/utils exec cmdWrapper.Stop) and waits for "
        "it forever; process group killed";
  } else if (process.harness_deadline_hit) {
    result.harness_problem = "would hang kubelet: " + verb + " still running after " +
                             std::to_string(settings_.harness_deadline.count()) +
                             " ms (kubelet has no timeout for it); process group killed";
  } else if (process.output_held_open) {
    result.harness_problem =
        "would hang kubelet: the driver exited but a process it started keeps its "
        "stdout/stderr open (CombinedOutput waits for end of file); process group killed";
  } else if (process.output_capped) {
    result.harness_problem = "output exceeded the " + std::to_string(settings_.output_cap) +
                             "-byte cap; process group killed";
  }
  if (result.harness_problem.empty()) {
    result.verdict = Judge(verb, process.exit, process.combined);
  } else {
    result.verdict.outcome = Outcome::kFailure;
    result.verdict.error = result.harness_problem;
  }

  CallRecord record;
  record.node = node.name();
  record.component = component;
  record.verb = verb;
  record.argv = RedactedArgv(executable, args, redactor);
  record.env_changes = node.env();
  record.process = process;
  record.process.combined = redactor.Apply(process.combined);
  for (auto& c : record.process.chunks) c.bytes = redactor.Apply(c.bytes);
  record.verdict = result.verdict;
  record.verdict.error = redactor.Apply(record.verdict.error);
  if (record.verdict.status)
    record.verdict.status->message = redactor.Apply(record.verdict.status->message);
  record.harness_problem = result.harness_problem;
  record.mounts_added = MountsAdded(*before, *after);
  record.mounts_removed = MountsAdded(*after, *before);
  result.record = transcript_.AddCall(record);
  return result;
}

void DriverInvoker::RecordCached(Node& node, const std::string& component,
                                 const std::string& executable, const Args& args,
                                 const Redactor& redactor) {
  CallRecord record;
  record.node = node.name();
  record.component = component;
  record.verb = args.empty() ? "" : args[0];
  record.argv = RedactedArgv(executable, args, redactor);
  record.answered_from_cache = true;
  record.verdict.outcome = Outcome::kNotSupported;
  record.verdict.error = "Not supported";
  transcript_.AddCall(record);
}

}  // namespace flexkit::sim
