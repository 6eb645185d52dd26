// The failover harness: a simulated cluster over a case's two nodes and
// the checks every [failover] case makes of data, attachments and calls.
#include "conformance/failover.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>

namespace flexkit::conform::failover {
namespace {

// FNV-1a: a checksum to report and compare, not a security property.
std::uint64_t Checksum(const std::string& data) {
  std::uint64_t h = 1469598103934665603ull;
  for (unsigned char ch : data) h = (h ^ ch) * 1099511628211ull;
  return h;
}

bool Among(const std::vector<const sim::Node*>& owners, const std::string& name) {
  return std::any_of(owners.begin(), owners.end(),
                     [&](const sim::Node* n) { return n->name() == name; });
}

std::string Names(const std::vector<const sim::Node*>& owners) {
  if (owners.empty()) return "nothing";
  std::string out;
  for (const sim::Node* n : owners) out += (out.empty() ? "" : " or ") + n->name();
  return "[" + out + "]";
}

sim::Node& SecondNode(CaseContext& c) {
  if (c.node_count() < 2) {
    c.Skip("profile: a failover needs two nodes (nodes: 2); the profile has " +
           std::to_string(c.node_count()));
  }
  return c.node(1);
}

std::string Hex(std::uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

// Written through the node's root without fsync: only a clean unmount saves it.
void WriteUnsynced(sim::Node& n, const std::string& path, const std::string& data) {
  const std::string real = "/proc/" + std::to_string(n.holder_pid()) + "/root" + path;
  int fd = ::open(real.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw std::runtime_error("open " + path + " on " + n.name());
  const bool ok = ::write(fd, data.data(), data.size()) == static_cast<ssize_t>(data.size());
  ::close(fd);
  if (!ok) throw std::runtime_error("write " + path + " on " + n.name());
}

}  // namespace

std::string AttacherName(Attacher a) {
  return a == Attacher::kController ? "controller" : "kubelet";
}

std::string Joined(const std::vector<std::string>& lines) {
  std::string out;
  for (const auto& l : lines) out += (out.empty() ? "" : "; ") + l;
  return out.empty() ? "no error reported" : out;
}

std::string MessageOf(const sim::CallRecord& r) {
  if (!r.harness_problem.empty()) return r.harness_problem;
  if (r.verdict.status && !r.verdict.status->message.empty()) return r.verdict.status->message;
  return r.verdict.error;
}

std::shared_ptr<Failover> Failover::Make(CaseContext& c, Attacher attacher, bool rwo_pv) {
  auto f = std::make_shared<Failover>(c, attacher, rwo_pv);
  f->Start();
  return f;
}

Failover::Failover(CaseContext& c, Attacher attacher, bool rwo_pv)
    : c_(c), attacher_(attacher), rwo_pv_(rwo_pv), a_(c.node(0)), b_(SecondNode(c)) {}

sim::Pod Failover::Schedule(sim::Node& n, int rounds) {
  sim::Pod pod;
  pod.name = c_.Unique("pod");
  pod.uid = c_.Unique("uid");
  pod.node = n.name();
  pod.volumes = {volume_};
  sim::Manifest m;
  m.pods = {pod};
  cluster_->Apply(m);
  Settle(rounds);
  return pod;
}

sim::Pod Failover::Place(sim::Node& n) {
  sim::Pod pod = Schedule(n);
  RequireMounted(pod, kF14, "set-up on " + n.name());
  return pod;
}

std::vector<std::string> Failover::Settle(int rounds) {
  last_errors_ = cluster_->Settle(rounds);
  c_.CheckDrivenCalls();
  if (DetachWhatKubeletLeft()) {
    last_errors_ = cluster_->Settle(rounds);
    c_.CheckDrivenCalls();
  }
  return last_errors_;
}

bool Failover::DetachWhatKubeletLeft() {
  bool detached = false;
  for (sim::Node* n : {&a_, &b_}) {
    if (!n->running()) continue;
    for (const auto& volume : cluster_->kubelet(n->name()).TakeVolumesLeftAttached()) {
      if (volume != volume_name_) continue;
      c_.transcript().AddEvent(
          "an operator detaches what kubelet left attached",
          {{"node", n->name()},
           {"volume", volume},
           {"why",
            "with kubelet-managed attach, kubelet since 1.28 never detaches a volume it "
            "reconstructed at a restart (reconstruct.go updateReconstructedFromNodeStatus); "
            "without this the pod can never move"}});
      const sim::Step d = c_.ops().Detach(*n, sim::Component::kKubelet, spec_, n->name());
      if (!d.ok()) {
        c_.Record("F12 detach-succeeds: detach succeeds",
                  "detach " + volume + " from " + n->name() + " after kubelet left it: " + d.error);
      }
      detached = true;
    }
  }
  return detached;
}

std::vector<std::string> Failover::Advance(sim::Clock::Duration d, int rounds) {
  last_errors_ = cluster_->Advance(d, rounds);
  c_.CheckDrivenCalls();
  if (DetachWhatKubeletLeft()) {
    last_errors_ = cluster_->Settle(rounds);
    c_.CheckDrivenCalls();
  }
  return last_errors_;
}

std::vector<std::string> Failover::WaitForForceDetach(int rounds) {
  return Advance(sim::ControllerSettings{}.max_wait_for_unmount, rounds);
}

bool Failover::SetUpOn(const sim::Node& n) {
  auto& k = cluster_->kubelet(n.name());
  return k.DeviceMounted(volume_name_) || !k.PodsWithVolume(volume_name_).empty();
}

bool Failover::Mounted(const sim::Pod& pod) {
  sim::Node& n = cluster_->node(pod.node);
  return n.running() && cluster_->kubelet(pod.node).PodsWithVolume(volume_name_).count(pod.uid) &&
         c_.PodVolumeSetUp(n, PodDir(pod));
}

void Failover::RequireMounted(const sim::Pod& pod, const std::string& rule,
                              const std::string& when) {
  if (!Mounted(pod)) {
    c_.Fail(rule,
            when + ": pod " + pod.name + " on " + pod.node +
                " does not have its volume mounted; the cluster reports: " + Joined(last_errors_));
  }
}

std::string Failover::PodDir(const sim::Pod& pod) {
  return cluster_->kubelet(pod.node).PodVolumeDir(pod, pod.volumes.front());
}

std::vector<sim::CallRecord> Failover::CallsFor(const std::string& verb, const sim::Node& node,
                                                std::size_t from) {
  std::vector<sim::CallRecord> out;
  auto calls = c_.transcript().Calls();
  for (std::size_t i = from; i < calls.size(); ++i) {
    const auto& r = calls[i];
    if (r.verb != verb || r.answered_from_cache) continue;
    const bool named = std::find(r.argv.begin(), r.argv.end(), node.name()) != r.argv.end();
    if (named || r.node == node.name()) out.push_back(r);
  }
  return out;
}

std::map<std::string, std::uint64_t> Failover::WriteFiles(const sim::Pod& pod,
                                                          const std::string& stem, int count,
                                                          bool synced) {
  std::map<std::string, std::uint64_t> written;
  sim::Node& n = cluster_->node(pod.node);
  for (int i = 0; i < count; ++i) {
    const std::string name = stem + "-" + std::to_string(i) + ".bin";
    std::string data;
    std::uint64_t x = Checksum(volume_name_ + name);
    data.reserve(64 * 1024);
    while (data.size() < 64 * 1024) {
      x = x * 6364136223846793005ull + 1442695040888963407ull;
      data.push_back(static_cast<char>(x >> 56));
    }
    const std::string path = PodDir(pod) + "/" + name;
    try {
      if (synced) {
        n.filesystem().WriteFile(path, data);
      } else {
        WriteUnsynced(n, path, data);
      }
    } catch (const std::exception& e) {
      // Read-only by design (informational files): no data can follow the
      // pod, and kubelet requires nothing more (as CheckDataRoundTrip).
      if (!CaseContext::Listable(n, PodDir(pod))) {
        c_.RecordCheck(n, "write", path, e.what());
        c_.Fail("volume-usable: a mounted volume is writable", std::string("write: ") + e.what());
      }
      c_.Skip("capability: the volume is mounted but not writable (" + std::string(e.what()) +
              "), so no data can follow the pod");
    }
    checksums_[name] = written[name] = Checksum(data);
  }
  return written;
}

void Failover::CheckFiles(const sim::Pod& pod, const std::string& rule) {
  CheckFiles(pod, rule, checksums_);
}

void Failover::CheckFiles(const sim::Pod& pod, const std::string& rule,
                          const std::map<std::string, std::uint64_t>& sums) {
  sim::Node& n = cluster_->node(pod.node);
  for (const auto& [name, sum] : sums) {
    std::string data;
    try {
      data = n.filesystem().ReadFile(PodDir(pod) + "/" + name);
    } catch (const std::exception& e) {
      c_.RecordCheck(n, "read", PodDir(pod) + "/" + name, e.what());
      c_.Fail(rule, "on " + n.name() + ": " + e.what());
    }
    if (Checksum(data) != sum) {
      c_.RecordCheck(n, "read", PodDir(pod) + "/" + name, "checksum " + Hex(Checksum(data)));
      c_.Fail(rule, "on " + n.name() + ": " + name + " has checksum " + Hex(Checksum(data)) + " (" +
                        std::to_string(data.size()) + " bytes), written with " + Hex(sum));
    }
  }
}

void Failover::CheckUsable(const sim::Pod& pod, const std::string& rule, const std::string& stem) {
  if (!Mounted(pod)) {
    c_.Fail(rule, PodDir(pod) + " on " + pod.node +
                      " is no longer mounted; the cluster reports: " + Joined(last_errors_));
  }
  CheckFiles(pod, rule);
  WriteFiles(pod, stem, 1);
  CheckFiles(pod, rule);
}

std::map<std::string, std::uint64_t> Failover::Files(const sim::Pod& pod) {
  sim::Node& n = cluster_->node(pod.node);
  std::map<std::string, std::uint64_t> out;
  const std::string dir = PodDir(pod);
  std::error_code ec;
  const std::string real = "/proc/" + std::to_string(n.holder_pid()) + "/root" + dir;
  for (const auto& e : std::filesystem::directory_iterator(real, ec)) {
    if (!e.is_regular_file(ec)) continue;
    const std::string name = e.path().filename().string();
    out[name] = Checksum(n.filesystem().ReadFile(dir + "/" + name));
  }
  return out;
}

void Failover::CheckBackend(const sim::Node* node, const std::string& when) {
  CheckBackendOwner(node ? Owners{node} : Owners{}, when);
}

void Failover::CheckBackendOwner(const Owners& expected, const std::string& when) {
  if (!c_.profile().attachable()) return;
  const bool many = c_.profile().read_write_many;
  // A shared volume may stay attached where the controller has not
  // detached it yet (a dead node waits for its force-detach): the
  // controller lets the next node attach meanwhile.
  Owners owners = expected;
  if (many && !expected.empty()) {
    for (const auto& name : ControllerAttachments())
      for (const sim::Node* n : {&a_, &b_})
        if (n->name() == name && !Among(owners, name)) owners.push_back(n);
  }
  auto doubles = c_.fixture().DoubleAttachments();
  if (!doubles.empty() && !many) {
    c_.Fail(kF14, when + ": the backend had a volume attached to two nodes: " + doubles.front());
  }
  auto attachments = c_.fixture().Attachments();
  if (!attachments) {
    Witness(owners, when);
    return;
  }
  for (const auto& [volume, nodes] : *attachments) {
    // ReadWriteMany: attached to any of the owners, several at once.
    const bool right =
        owners.empty() ? nodes.empty()
        : many
            ? !nodes.empty() && std::all_of(nodes.begin(), nodes.end(),
                                            [&](const std::string& n) { return Among(owners, n); })
            : nodes.size() == 1 && Among(owners, nodes.front());
    if (!right) {
      std::string where;
      for (const auto& n : nodes) where += (where.empty() ? "" : ", ") + n;
      c_.Fail(kF14, when + ": backend volume " + volume + " is attached to [" + where +
                        "], expected " + Names(owners));
    }
  }
}

void Failover::Witness(const Owners& owners, const std::string& when) {
  sim::Node* caller = b_.running() ? &b_ : a_.running() ? &a_ : nullptr;
  if (!caller) return;
  std::vector<std::string> attached;
  std::vector<std::string> unknown;
  // The call that said so, per node: a finding names it, not the call
  // after it (which may have rightly said false).
  std::map<std::string, std::size_t> said_attached;
  for (sim::Node* n : {&a_, &b_}) {
    // With kubelet-managed attach nothing runs isattached (§7.3): its
    // answer still witnesses the backend, its reply's shape is only a WARN.
    // Each node is asked on itself, as its kubelet would be the one to ask:
    // a driver may keep a node's attachments on that node (a stateDir), and
    // no other node's answer about it is anything kubelet relies on. A
    // node that is down cannot be asked: unknown.
    if (attacher_ == Attacher::kKubelet && !n->running()) {
      unknown.push_back(n->name());
      continue;
    }
    auto r =
        attacher_ == Attacher::kController
            ? c_.ops().CallIsAttached(*caller, sim::Component::kController, spec_, n->name())
            : c_.beyond_kubelet().CallIsAttached(*n, sim::Component::kKubelet, spec_, n->name());
    if (!r.ok() || !r.verdict.status) {
      unknown.push_back(n->name());
      continue;
    }
    if (r.verdict.status->attached) {
      attached.push_back(n->name());
      said_attached[n->name()] = c_.transcript().Calls().size() - 1;
    }
  }
  auto list = [](const std::vector<std::string>& names) {
    std::string out;
    for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
    return "[" + out + "]";
  };
  if (!attached.empty() &&
      !c_.IsAttachedWitnesses(
          *caller, when + ": isattached says " + spec_.name + " is attached to " + list(attached),
          kF14)) {
    return;
  }
  if (attached.size() > 1 && !c_.profile().read_write_many) {
    c_.Fail(kF14,
            when + ": isattached says " + spec_.name + " is attached to " + list(attached) +
                " at once (a volume is attached to one node at a time)",
            said_attached.at(attached.back()));
  }
  const std::string should = "; it should be attached to " +
                             (owners.empty() ? std::string("no node") : Names(owners)) + " only";
  for (const std::string& name : attached) {
    if (!Among(owners, name))
      c_.Fail(kF14, when + ": isattached says " + spec_.name + " is attached to " + name + should,
              said_attached.at(name));
  }
  // Not attached anywhere: wrong when some owner was asked and none said
  // so, unless an owner's answer is unknown.
  const bool all_owners_known = std::none_of(owners.begin(), owners.end(), [&](auto* n) {
    return std::find(unknown.begin(), unknown.end(), n->name()) != unknown.end();
  });
  if (attached.empty() && !owners.empty() && all_owners_known) {
    c_.Fail(kF14, when + ": isattached says " + spec_.name + " is not attached to " +
                      Names(owners) + should);
  }
}

std::vector<std::string> Failover::ControllerAttachments() {
  std::vector<std::string> nodes;
  for (const auto& [key, attachment] : cluster_->controller().attachments()) {
    if (attachment.spec.name == volume_name_) nodes.push_back(key.second);
  }
  return nodes;
}

void Failover::Crash(sim::Node& n) {
  cluster_->CrashNode(n.name());  // every process in it, its daemon too
  c_.fixture().NodeCrashed(n);
}

void Failover::Restart(sim::Node& n) {
  cluster_->RestartNode(n.name());
  c_.fixture().NodeRestarted(n);
}

void Failover::Partition(sim::Node& n, bool cut) {
  n.SetPartitioned(cut);
  c_.fixture().SetBackendReachable(n, !cut);
  if (cut) {
    cluster_->StopKubelet(n.name());
  } else {
    cluster_->StartKubelet(n.name());
  }
  c_.transcript().AddEvent(cut ? "node partitioned: its daemon hangs, its kubelet is cut off"
                               : "partition healed: its daemon answers, its kubelet syncs",
                           {{"node", n.name()}});
}

void Failover::Start() {
  const DriverProfile& p = c_.profile();
  sim::ClusterConfig config;
  config.run_dir = c_.case_dir();
  config.profile = c_.version().name;
  config.call = c_.DrivenCallSettings();
  // The control plane reaches every node's backend by the node's name,
  // as B's environment does (A is the node that fails).
  config.control_plane_env = b_.env();
  cluster_ = std::make_unique<sim::Cluster>(config, c_.DrivenRunner(), &c_.transcript());
  const bool by_controller = attacher_ == Attacher::kController;
  c_.SetDrivenControllerManagedAttach(by_controller);
  cluster_->AdoptNode(a_, by_controller);
  cluster_->AdoptNode(b_, by_controller);
  cluster_->InstallDriver(p.driver, p.driver_name);

  sim::VolumeSpec spec = c_.Volume(c_.Unique("vol"));
  spec_ = spec;
  volume_name_ = spec.name;
  sim::FlexSource source;
  source.driver = spec.driver;
  source.fs_type = spec.fs_type;
  source.options = spec.options;
  sim::Manifest m;
  if (!p.secrets.empty()) {
    sim::Secret secret;
    secret.name = c_.Unique("secret");
    secret.type = spec.driver;
    secret.data = p.secrets;
    source.secret_name = secret.name;
    m.secrets.push_back(secret);
  }
  volume_.name = volume_name_;
  if (rwo_pv_) {
    sim::PersistentVolume pv;
    pv.name = volume_name_;
    pv.flex = source;
    pv.access_modes = {"ReadWriteOnce"};
    sim::PersistentVolumeClaim claim;
    claim.name = c_.Unique("claim");
    claim.volume_name = pv.name;
    volume_.claim_name = claim.name;
    m.pvs.push_back(pv);
    m.pvcs.push_back(claim);
  } else {
    volume_.flex = source;
  }
  cluster_->Apply(m);
  c_.tracker().Push("delete the pods and let the cluster tear down " + volume_name_,
                    [self = shared_from_this()] { self->TearDown(); });
}

void Failover::TearDown() {
  // Whatever happens, the control plane and its driver copies go.
  struct Release {
    std::unique_ptr<sim::Cluster>& cluster;
    ~Release() { cluster.reset(); }
  } release{cluster_};
  for (sim::Node* n : {&a_, &b_}) {
    if (n->partitioned()) Partition(*n, false);
    if (!n->running()) Restart(*n);
  }
  std::vector<std::pair<std::string, std::string>> pods;
  for (const auto& [key, pod] : cluster_->state().pods) pods.emplace_back(pod.ns, pod.name);
  for (const auto& [ns, name] : pods) cluster_->DeletePod(ns, name);
  auto errors = Settle();
  if (!errors.empty()) throw std::runtime_error("the cluster did not settle: " + Joined(errors));
  for (sim::Node* n : {&a_, &b_}) {
    if (SetUpOn(*n)) throw std::runtime_error(volume_name_ + " is still set up on " + n->name());
  }
  if (!ControllerAttachments().empty())
    throw std::runtime_error("the controller still has " + volume_name_ + " attached");
}

}  // namespace flexkit::conform::failover
