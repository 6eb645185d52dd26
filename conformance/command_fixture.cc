#include "conformance/command_fixture.h"

#include <nlohmann/json.hpp>
#include <stdexcept>

#include "conformance/case_context.h"
#include "conformance/leak_audit.h"
#include "simulator/boost_process_runner.h"

namespace flexkit::conform {
namespace {

std::string Clip(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  if (text.size() > 400) text = text.substr(0, 400) + "...";
  return text.empty() ? "(no output)" : text;
}

// In every hook's environment: what a hook starts is the fixture's.
constexpr char kHookMark[] = "FLEXCONFORM_FIXTURE_HOOK";

class CommandFixture : public Fixture {
 public:
  explicit CommandFixture(FixtureSpec spec) : spec_(std::move(spec)) {}

  std::map<std::string, std::string> NodeEnv(const std::string&,
                                             const std::string& case_dir) override {
    return CaseEnv(case_dir);
  }

  void Start(const std::string& case_dir, std::vector<sim::Node*> nodes) override {
    case_dir_ = case_dir;
    nodes_ = nodes;
    for (auto* n : nodes) names_ += (names_.empty() ? "" : " ") + n->name();
    Run("setup", spec_.setup, nullptr);
    started_ = true;
    for (auto* n : nodes) {
      if (Has("nodeStart")) Run("nodeStart", spec_.hooks.at("nodeStart"), n);
    }
  }

  std::vector<std::string> Stop() override {
    if (!started_) return {};
    started_ = false;
    std::vector<std::string> problems;
    auto attempt = [&problems, this](const std::string& hook, const std::string& command,
                                     sim::Node* n) {
      try {
        Run(hook, command, n);
      } catch (const std::exception& e) {
        problems.push_back(e.what());
      }
    };
    if (Has("nodeStop")) {
      for (auto* n : nodes_) {
        if (n->running()) attempt("nodeStop", spec_.hooks.at("nodeStop"), n);
      }
    }
    if (!spec_.teardown.empty()) attempt("teardown", spec_.teardown, nullptr);
    return problems;
  }

  // The node agents a hook left running (a daemon per node, say), found
  // by the mark every hook's environment carries, which what they fork
  // inherits.
  std::vector<pid_t> Pids() const override {
    std::vector<pid_t> pids;
    for (auto* n : nodes_) {
      if (!n->running()) continue;
      for (pid_t p : n->ProcessesInNamespace()) {
        if (HasEnvKey(p, kHookMark)) pids.push_back(p);
      }
    }
    return pids;
  }

  bool Has(const std::string& hook) const override { return spec_.hooks.count(hook) > 0; }

  void NodeCrashed(sim::Node& n) override {
    if (Has("crash")) Run("crash", spec_.hooks.at("crash"), &n, /*in_namespace=*/false);
  }
  void NodeRestarted(sim::Node& n) override {
    if (Has("restart")) Run("restart", spec_.hooks.at("restart"), &n, false);
    if (Has("nodeStart")) Run("nodeStart", spec_.hooks.at("nodeStart"), &n);
  }
  void SetBackendReachable(sim::Node& n, bool reachable) override {
    const std::string hook = reachable ? "heal" : "partition";
    if (Has(hook)) Run(hook, spec_.hooks.at(hook), &n, false);
  }
  std::optional<std::map<std::string, std::vector<std::string>>> Attachments() override {
    if (!Has("attachments")) return std::nullopt;
    const std::string out = Run("attachments", spec_.hooks.at("attachments"), nullptr);
    try {
      return ParseAttachments(out);
    } catch (const std::invalid_argument& e) {
      throw CaseFailure("fixture: hook attachments",
                        "fixture hook attachments `" + spec_.hooks.at("attachments") +
                            "`: " + e.what() + "; it printed: " + Clip(out));
    }
  }

 private:
  // Runs one hook to completion; its stdout+stderr on success, else throws
  // CaseFailure naming it. nodeStart and nodeStop run inside the node's
  // namespace (`in_namespace`), every other hook on the host.
  std::string Run(const std::string& hook, const std::string& command, sim::Node* n,
                  bool in_namespace = true) {
    std::string text =
        Substitute(Substitute(command, "{{case_dir}}", case_dir_), "{{nodes}}", names_);
    if (n) text = Substitute(text, "{{node}}", n->name());
    sim::ProcessSpec spec;
    spec.executable = "/bin/sh";
    spec.args = {"-c", text};
    spec.env_overrides = {
        {"FLEXCONFORM_CASE_DIR", case_dir_}, {"FLEXCONFORM_NODES", names_}, {kHookMark, hook}};
    if (n) {
      spec.env_overrides["FLEXCONFORM_NODE"] = n->name();
      if (in_namespace && n->running()) spec.namespace_fd = n->namespace_fd();
    }
    spec.harness_deadline = spec_.hook_timeout;
    auto r = runner_.Run(spec);
    const std::string where =
        "fixture hook " + hook + (n ? " for " + n->name() : "") + " `" + text + "`: ";
    const std::string rule = "fixture: hook " + hook;
    if (!r.spawn_error.empty()) throw CaseFailure(rule, where + "cannot start: " + r.spawn_error);
    if (r.harness_deadline_hit) {
      throw CaseFailure(rule, where + "still running after " +
                                  std::to_string(spec_.hook_timeout.count()) +
                                  " ms (killed); it printed: " + Clip(r.combined));
    }
    if (!r.exit.ok()) {
      throw CaseFailure(rule, where + r.exit.GoExecError() + "; it printed: " + Clip(r.combined));
    }
    return r.combined;
  }

  FixtureSpec spec_;
  std::string case_dir_;
  std::string names_;
  std::vector<sim::Node*> nodes_;
  bool started_ = false;
  sim::BoostProcessRunner runner_;
};

}  // namespace

std::map<std::string, std::vector<std::string>> ParseAttachments(const std::string& output) {
  auto doc = nlohmann::json::parse(output, nullptr, false);
  if (doc.is_discarded()) throw std::invalid_argument("not one JSON document");
  if (!doc.is_object()) throw std::invalid_argument("not a JSON object of volume -> [node, ...]");
  std::map<std::string, std::vector<std::string>> out;
  for (const auto& [volume, nodes] : doc.items()) {
    if (!nodes.is_array())
      throw std::invalid_argument("volume " + volume + ": not an array of node names");
    auto& list = out[volume];
    for (const auto& node : nodes) {
      if (!node.is_string())
        throw std::invalid_argument("volume " + volume + ": " + node.dump() +
                                    " is not a node name");
      list.push_back(node.get<std::string>());
    }
  }
  return out;
}

std::unique_ptr<Fixture> MakeCommandFixture(const FixtureSpec& spec) {
  return std::make_unique<CommandFixture>(spec);
}

}  // namespace flexkit::conform
