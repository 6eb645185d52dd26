#include "conformance/fixture.h"

#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <thread>

#include "conformance/background_process.h"
#include "conformance/command_fixture.h"
#include "platform/unix_http.h"

namespace flexkit::conform {

std::map<std::string, std::string> CaseEnv(const std::string& case_dir) {
  return {{"FLEXCONFORM_CASE_DIR", case_dir}};
}

namespace {

class NoFixture : public Fixture {
 public:
  std::map<std::string, std::string> NodeEnv(const std::string&,
                                             const std::string& case_dir) override {
    return CaseEnv(case_dir);
  }
  void Start(const std::string&, std::vector<sim::Node*>) override {}
  std::vector<std::string> Stop() override { return {}; }
  std::vector<pid_t> Pids() const override { return {}; }
};

// convoy-fake cloud + one daemon per node (inside the node's namespace,
// through nsenter on the node's holder), and convoy-flexvolume's per-node
// config. Admin calls are HTTP on the cloud's unix socket.
class ConvoyFakeFixture : public Fixture {
 public:
  ConvoyFakeFixture(FixtureSpec spec, std::string binary)
      : spec_(std::move(spec)), binary_(std::move(binary)) {}

  std::map<std::string, std::string> NodeEnv(const std::string& node,
                                             const std::string& case_dir) override {
    auto env = CaseEnv(case_dir);
    env["CONVOY_FLEXVOLUME_CONFIG"] = case_dir + "/convoy/" + node + ".json";
    return env;
  }

  void Start(const std::string& case_dir, std::vector<sim::Node*> nodes) override {
    dir_ = case_dir + "/convoy";
    std::filesystem::create_directories(dir_);
    cloud_ = std::make_unique<BackgroundProcess>(
        std::vector<std::string>{binary_, "cloud", "--socket", dir_ + "/cloud.sock", "--state-dir",
                                 dir_ + "/cloud", "--attach-delay", "0", "--consistency-delay",
                                 "0"},
        dir_ + "/cloud.log");
    WaitForSocket(dir_ + "/cloud.sock", *cloud_);
    for (auto* n : nodes) {
      daemon_hosts_.push_back(n->name());
      auto reply = Admin("POST", "/admin/instances", nlohmann::json{{"Host", n->name()}}.dump());
      const std::string instance = reply.value("InstanceId", "");
      if (instance.empty())
        throw std::runtime_error("convoy-fake cloud: no InstanceId for " + n->name() + ": " +
                                 reply.dump());
      instances_[n->name()] = instance;
      StartDaemon(*n);
      std::ofstream(dir_ + "/" + n->name() + ".json") << nlohmann::json{
          {"socket", Socket(*n)},
          {"socketTemplate", dir_ + "/{node}.sock"},
          {"mode", spec_.mode},
          // Short: a hung backend costs the driver's request timeout, which
          // must still fire and be judged; the fake answers the slowest
          // real request (create: mkfs on a loop device) well inside it.
          {"timeouts", {{"connect", "2s"}, {"request", "2s"}, {"waitforattach", "10s"}}},
          {"logFile", dir_ + "/driver.log"},
          {"stateDir", dir_ + "/driver-state"}}.dump();
    }
  }

  bool Has(const std::string&) const override { return true; }

  void NodeCrashed(sim::Node& n) override {
    // The crash killed the daemon; reap it, then the instance stops as a
    // dead host's does (its attachments stay, as on EC2).
    if (auto it = daemons_.find(n.name()); it != daemons_.end()) {
      it->second->Stop();
      daemons_.erase(it);
    }
    Admin("POST", "/admin/instances/" + instances_.at(n.name()) + "/stop", "");
  }

  void NodeRestarted(sim::Node& n) override {
    Admin("POST", "/admin/instances/" + instances_.at(n.name()) + "/start", "");
    StartDaemon(n);
  }

  void SetBackendReachable(sim::Node& n, bool reachable) override {
    // A hung daemon, as behind a partition that drops packets: connections
    // queue on its socket and no answer comes; the driver's own request
    // timeout is all that ends the call. Requests queued meanwhile run
    // when it thaws, as a partition's late packets arrive.
    if (auto it = daemons_.find(n.name()); it != daemons_.end()) it->second->Freeze(!reachable);
  }

  std::optional<std::map<std::string, std::vector<std::string>>> Attachments() override {
    auto state = Admin("GET", "/admin/state", "");
    std::map<std::string, std::string> host_of;
    for (const auto& i : state["Instances"])
      host_of[i.value("InstanceId", "")] = i.value("Host", "");
    std::map<std::string, std::vector<std::string>> attached;
    for (const auto& v : state["Volumes"]) {
      auto& hosts = attached[v.value("VolumeId", "")];
      for (const auto& a : v["Attachments"]) hosts.push_back(host_of[a.value("InstanceId", "")]);
    }
    return attached;
  }

  std::vector<std::string> DoubleAttachments() override {
    std::vector<std::string> found;
    const auto reply = Admin("GET", "/admin/violations", "");  // outlives the loop
    for (const auto& v : reply["Violations"])
      found.push_back(v.is_string() ? v.get<std::string>() : v.dump());
    return found;
  }

  std::vector<std::string> Stop() override {
    std::vector<std::string> problems;
    for (auto& [node, d] : daemons_) d->Stop();
    daemons_.clear();
    if (!cloud_) return problems;
    try {
      auto state = Admin("GET", "/admin/state", "");
      if (state.contains("Violations") && !state["Violations"].empty())
        problems.push_back("convoy-fake cloud: a volume was attached to two instances: " +
                           state["Violations"].dump());
      // Attachments are the fixture's loop devices: released here so that
      // a leak audit blames only what the driver left.
      for (auto& v : state["Volumes"]) {
        if (!v["Attachments"].empty())
          Admin("POST", "/ec2/DetachVolume",
                nlohmann::json{{"VolumeId", v["VolumeId"]}, {"Force", true}}.dump());
      }
    } catch (const std::exception& e) {
      problems.push_back(std::string("convoy-fake cloud: cleanup: ") + e.what());
    }
    cloud_->Stop();
    cloud_.reset();
    return problems;
  }

  std::vector<pid_t> Pids() const override {
    std::vector<pid_t> pids;
    if (cloud_) pids.push_back(cloud_->pid());
    for (const auto& [node, d] : daemons_) pids.push_back(d->pid());
    return pids;
  }

  std::map<std::string, std::string> RequestLogs() const override {
    if (dir_.empty()) return {};
    std::map<std::string, std::string> logs{{"cloud", dir_ + "/cloud/convoy-fake-cloud.log"}};
    for (const auto& host : daemon_hosts_)
      logs[host] = dir_ + "/" + host + "/convoy-fake-daemon.log";
    return logs;
  }

 private:
  static void WaitForSocket(const std::string& path, BackgroundProcess& p) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!platform::UnixSocketListening(path)) {
      if (!p.running())
        throw std::runtime_error("convoy-fake exited before listening on " + path +
                                 " (see its .log beside it)");
      if (std::chrono::steady_clock::now() > deadline)
        throw std::runtime_error("convoy-fake: nothing listens on " + path + " after 10 s");
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }

  std::string Socket(const sim::Node& n) const { return dir_ + "/" + n.name() + ".sock"; }

  // The node's daemon, inside its namespace (nsenter on the holder), over
  // the node's state dir, so a restart finds the records it had.
  void StartDaemon(sim::Node& n) {
    const std::string sock = Socket(n);
    // A killed daemon leaves its socket file: gone first, so that waiting
    // for the file waits for the new daemon.
    std::error_code ec;
    std::filesystem::remove(sock, ec);
    auto daemon =
        std::make_unique<BackgroundProcess>(std::vector<std::string>{"/usr/bin/nsenter",
                                                                     "--target",
                                                                     std::to_string(n.holder_pid()),
                                                                     "--mount",
                                                                     binary_,
                                                                     "daemon",
                                                                     "--socket",
                                                                     sock,
                                                                     "--state-dir",
                                                                     dir_ + "/" + n.name(),
                                                                     "--drivers",
                                                                     "ebs,vfs",
                                                                     "--vfs-path",
                                                                     dir_ + "/vfs",
                                                                     "--cloud",
                                                                     dir_ + "/cloud.sock",
                                                                     "--instance-id",
                                                                     instances_.at(n.name()),
                                                                     "--host",
                                                                     n.name(),
                                                                     "--api",
                                                                     spec_.api},
                                            dir_ + "/" + n.name() + ".log");
    WaitForSocket(sock, *daemon);
    daemons_[n.name()] = std::move(daemon);
  }

  nlohmann::json Admin(const std::string& method, const std::string& path,
                       const std::string& body) {
    const platform::HttpReply reply =
        platform::UnixHttpRequest(dir_ + "/cloud.sock", method, path, body);
    auto doc = nlohmann::json::parse(reply.body, nullptr, false);
    if (doc.is_discarded())
      throw std::runtime_error("convoy-fake admin " + method + " " + path + ": HTTP " +
                               std::to_string(reply.status) + ", not JSON: " + reply.body);
    return doc;
  }

  FixtureSpec spec_;
  std::string binary_;
  std::string dir_;
  std::unique_ptr<BackgroundProcess> cloud_;
  std::map<std::string, std::unique_ptr<BackgroundProcess>> daemons_;  // by node
  std::map<std::string, std::string> instances_;                       // node -> instance id
  std::vector<std::string> daemon_hosts_;  // nodes with a daemon, kept after Stop for RequestLogs
};

}  // namespace

std::unique_ptr<Fixture> MakeFixture(const FixtureSpec& spec, const std::string& flexconform_dir) {
  if (spec.kind == "none") return std::make_unique<NoFixture>();
  if (spec.kind == "command") return MakeCommandFixture(spec);
  std::string binary = spec.convoy_fake;
  if (binary.empty()) {
    if (const char* env = std::getenv("FLEXCONFORM_CONVOY_FAKE")) binary = env;
  }
  if (binary.empty()) binary = flexconform_dir + "/../fakes/convoy-fake";
  binary = std::filesystem::weakly_canonical(binary).string();
  if (::access(binary.c_str(), X_OK) != 0) {
    throw std::runtime_error("fixture convoy-fake: no executable at " + binary +
                             " (set fixture.convoyFake or FLEXCONFORM_CONVOY_FAKE)");
  }
  return std::make_unique<ConvoyFakeFixture>(spec, binary);
}

}  // namespace flexkit::conform
