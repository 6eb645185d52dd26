#include "simulator/cluster.h"

#include <algorithm>
#include <filesystem>
#include <sstream>
#include <stdexcept>

#include "simulator/plugin_name.h"

namespace flexkit::sim {
namespace fs = std::filesystem;

Cluster::Cluster(ClusterConfig config, ProcessRunner& runner, Transcript* transcript)
    : config_(std::move(config)),
      profile_(FindProfile(config_.profile)),
      transcript_(transcript ? *transcript : own_transcript_),
      invoker_(runner, transcript_, config_.call) {
  control_plane_ = MakeNode(kControlPlaneName, config_.control_plane_env);
  controller_ =
      std::make_unique<AttachDetachController>(*control_plane_, state_, invoker_, profile_,
                                               transcript_, clock_, node_ptrs_, config_.controller);
}

Cluster::~Cluster() {
  kubelets_.clear();
  controller_.reset();
  if (log_) transcript_.SetCallObserver(nullptr);
  nodes_.clear();  // each node's namespace and processes go with it
  control_plane_.reset();
  for (Node* node : adopted_) {
    for (const auto& [source, dir_name] : drivers_) {
      std::error_code ec;
      fs::remove_all(fs::path(node->plugin_dir()) / dir_name, ec);
    }
  }
}

void Cluster::SetLog(std::function<void(const std::string&)> log) {
  log_ = std::move(log);
  if (!log_) return;
  transcript_.SetCallObserver([this](const CallRecord& r) {
    std::string line =
        "[" + r.component + " " + r.node + "] " + r.verb + " -> " + OutcomeName(r.verdict.outcome);
    if (r.answered_from_cache) line += " (cached)";
    if (!r.verdict.error.empty() && r.verdict.outcome != Outcome::kNotSupported) {
      line += ": " + r.verdict.error;
    }
    log_(line);
  });
}

void Cluster::Log(const std::string& line) {
  if (log_) log_(line);
}

void Cluster::AddNode(const std::string& name, bool controller_managed_attach,
                      std::map<std::string, std::string> env) {
  if (node_ptrs_.count(name) != 0) {
    state_.node_status[name].controller_managed_attach = controller_managed_attach;
    return;
  }
  auto node = MakeNode(name, std::move(env));
  Node& added = *node;
  nodes_[name] = std::move(node);
  AddKubelet(added, controller_managed_attach);
}

std::unique_ptr<Node> Cluster::MakeNode(const std::string& name,
                                        std::map<std::string, std::string> env) {
  if (config_.make_node) return config_.make_node(name, config_.run_dir, std::move(env));
  return std::make_unique<Node>(name, config_.run_dir, std::move(env));
}

void Cluster::AdoptNode(Node& node, bool controller_managed_attach) {
  if (node_ptrs_.count(node.name()) != 0)
    throw std::runtime_error("node " + node.name() + " exists already");
  adopted_.push_back(&node);
  AddKubelet(node, controller_managed_attach);
}

std::vector<fs::path> DriverHelpers(const fs::path& driver) {
  const fs::path executable = fs::absolute(driver);
  constexpr std::size_t kMaxFiles = 16;
  constexpr std::uintmax_t kMaxBytes = 8u << 20;
  const fs::path folder = executable.parent_path();
  const bool own_folder = folder.filename().string().find('~') != std::string::npos;
  std::vector<fs::path> helpers;
  std::uintmax_t bytes = 0;
  for (const auto& e : fs::directory_iterator(folder)) {
    const std::string name = e.path().filename().string();
    if (!e.is_regular_file() || e.path() == executable || name.empty() || name[0] == '.') continue;
    helpers.push_back(e.path());
    bytes += e.file_size();
    if (!own_folder && (helpers.size() > kMaxFiles || bytes > kMaxBytes)) return {};
  }
  std::sort(helpers.begin(), helpers.end());
  return helpers;
}

namespace {

// Copies each helper into `dir` through a dot-name and a rename, as a
// DaemonSet installer does.
void CopyDriverHelpers(const fs::path& source, const fs::path& dir) {
  for (const auto& helper : DriverHelpers(source)) {
    const std::string name = helper.filename().string();
    fs::copy_file(helper, dir / ("." + name + ".tmp"), fs::copy_options::overwrite_existing);
    fs::rename(dir / ("." + name + ".tmp"), dir / name);
  }
}

}  // namespace

void Cluster::AddKubelet(Node& node, bool controller_managed_attach) {
  for (const auto& [source, dir_name] : drivers_) {
    fs::path dir = fs::path(node.plugin_dir()) / dir_name;
    fs::create_directories(dir);
    CopyDriverHelpers(source, dir);
    fs::copy_file(source, dir / ExecutableName(UnescapeDriverName(dir_name)),
                  fs::copy_options::overwrite_existing);
  }
  const std::string& name = node.name();
  node_ptrs_[name] = &node;
  state_.node_status[name].controller_managed_attach = controller_managed_attach;
  kubelets_[name] = std::make_unique<Kubelet>(node, state_, invoker_, profile_, transcript_);
  transcript_.AddEvent("node added",
                       {{"node", name}, {"controllerManagedAttach", controller_managed_attach}});
  Log("node " + name + " added");
}

void Cluster::InstallDriver(const std::string& executable, const std::string& driver_name) {
  fs::path source = fs::absolute(executable);
  std::string dir_name = source.parent_path().filename().string();
  if (!driver_name.empty()) dir_name = EscapeDriverName(driver_name);
  std::string exe = ExecutableName(UnescapeDriverName(dir_name));
  drivers_.emplace_back(source.string(), dir_name);
  std::vector<std::string> plugin_dirs = {control_plane_->plugin_dir()};
  for (const auto& [name, node] : node_ptrs_) plugin_dirs.push_back(node->plugin_dir());
  for (const auto& pd : plugin_dirs) {
    fs::path dir = fs::path(pd) / dir_name;
    fs::create_directories(dir);
    CopyDriverHelpers(source, dir);
    fs::copy_file(source, dir / ("." + exe + ".tmp"), fs::copy_options::overwrite_existing);
    fs::rename(dir / ("." + exe + ".tmp"), dir / exe);
  }
  std::vector<std::string> helpers;
  for (const auto& h : DriverHelpers(source)) helpers.push_back(h.filename().string());
  transcript_.AddEvent("driver installed",
                       {{"driver", UnescapeDriverName(dir_name)}, {"helpers", helpers}});
}

void Cluster::Apply(const Manifest& m) {
  for (const auto& n : m.nodes) AddNode(n.name, n.controller_managed_attach);
  for (const auto& s : m.secrets) state_.secrets[ClusterState::Key(s.ns, s.name)] = s;
  for (const auto& pv : m.pvs) state_.pvs[pv.name] = pv;
  for (const auto& c : m.pvcs) state_.pvcs[ClusterState::Key(c.ns, c.name)] = c;
  for (const auto& p : m.pods) {
    if (!p.node.empty() && node_ptrs_.count(p.node) == 0) {
      throw std::runtime_error("pod " + ClusterState::Key(p.ns, p.name) + ": node " + p.node +
                               " does not exist");
    }
    state_.pods[ClusterState::Key(p.ns, p.name)] = p;
    transcript_.AddEvent("pod created",
                         {{"pod", ClusterState::Key(p.ns, p.name)}, {"node", p.node}});
    Log("pod " + ClusterState::Key(p.ns, p.name) + " created on " + p.node);
  }
}

void Cluster::DeletePod(const std::string& ns, const std::string& name) {
  if (state_.pods.erase(ClusterState::Key(ns, name)) == 0) {
    throw std::runtime_error("delete pod " + ClusterState::Key(ns, name) + ": not found");
  }
  transcript_.AddEvent("pod deleted", {{"pod", ClusterState::Key(ns, name)}});
  Log("pod " + ClusterState::Key(ns, name) + " deleted");
}

const Pod& Cluster::pod(const std::string& ns, const std::string& name) const {
  auto it = state_.pods.find(ClusterState::Key(ns, name));
  if (it == state_.pods.end())
    throw std::runtime_error("pod " + ClusterState::Key(ns, name) + " not found");
  return it->second;
}

Node& Cluster::node(const std::string& name) {
  auto it = node_ptrs_.find(name);
  if (it == node_ptrs_.end()) throw std::runtime_error("node " + name + " does not exist");
  return *it->second;
}

Kubelet& Cluster::kubelet(const std::string& name) {
  node(name);
  return *kubelets_.at(name);
}

std::string Cluster::Fingerprint() const {
  std::ostringstream s;
  for (const auto& [name, status] : state_.node_status) {
    s << name << ":";
    for (const auto& [v, d] : status.volumes_attached) s << v << "=" << d << ",";
    for (const auto& v : status.volumes_in_use) s << v << ";";
  }
  for (const auto& [key, a] : controller_->attachments())
    s << key.first << "@" << key.second << a.uncertain;
  for (const auto& [name, k] : kubelets_) {
    for (const auto& [pk, p] : state_.pods) {
      for (const auto& v : p.volumes) {
        try {
          auto r = state_.Resolve(p, v);
          s << name << "/" << r.spec.name << "/" << k->PodsWithVolume(r.spec.name).size()
            << k->DeviceMounted(r.spec.name);
        } catch (const std::exception&) {
        }
      }
    }
  }
  return s.str();
}

std::vector<std::string> Cluster::Settle(int max_rounds) {
  std::vector<std::string> errors;
  std::string before = Fingerprint();
  for (int round = 0; round < max_rounds; ++round) {
    errors = controller_->Reconcile();
    for (auto& [name, k] : kubelets_) {
      if (!node_ptrs_.at(name)->running() || stopped_kubelets_.count(name) != 0) continue;
      auto e = k->Sync();
      errors.insert(errors.end(), e.begin(), e.end());
    }
    std::string after = Fingerprint();
    if (after == before) {
      if (errors.empty()) break;
      // Nothing moved and the controller holds a failed operation back:
      // nothing else happens until its back-off runs out, so time passes.
      if (auto retry = controller_->NextRetry(); retry && *retry > clock_.Now()) {
        const Clock::Duration wait = *retry - clock_.Now();
        clock_.Advance(wait);
        transcript_.AddEvent("time advanced", {{"ms", wait.count()},
                                               {"now_ms", clock_.Now().count()},
                                               {"why", "the controller's back-off"}});
      }
    }
    before = after;
  }
  for (const auto& e : errors) Log("error: " + e);
  return errors;
}

std::vector<std::string> Cluster::Advance(Clock::Duration d, int max_rounds) {
  clock_.Advance(d);
  transcript_.AddEvent("time advanced", {{"ms", d.count()}, {"now_ms", clock_.Now().count()}});
  Log("virtual time +" + std::to_string(d.count() / 1000) + "s");
  return Settle(max_rounds);
}

void Cluster::CrashNode(const std::string& name) {
  node(name).Crash();
  transcript_.AddEvent("node crashed", {{"node", name}});
  Log("node " + name + " crashed");
}

void Cluster::RestartNode(const std::string& name) {
  node(name).Restart();
  transcript_.AddEvent("node restarted", {{"node", name}});
  Log("node " + name + " restarted");
  kubelets_.at(name)->Restart();
}

void Cluster::StopKubelet(const std::string& name) {
  node(name);
  stopped_kubelets_.insert(name);
  transcript_.AddEvent("kubelet stopped", {{"node", name}});
  Log("kubelet on " + name + " stopped");
}

void Cluster::StartKubelet(const std::string& name) {
  stopped_kubelets_.erase(name);
  RestartKubelet(name);
}

void Cluster::RestartKubelet(const std::string& name) {
  kubelet(name).Restart();
  Log("kubelet on " + name + " restarted");
}

}  // namespace flexkit::sim
