// deploy/: the Sonobuoy plugin. The entry point runs as Sonobuoy runs it
// (SONOBUOY_RESULTS_DIR, a plugin dir with the driver installed, the
// profile from the config-map) and must always leave a JUnit report and a
// done file naming it. The plugin definition is checked offline: its
// sonobuoy-config and the host access the cases need, and its container
// spec, inside a Pod, decoded by the kubectl Debian packages (no server).
#include <gtest/gtest.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>

#include "conformance/profile.h"
#include "tests/support/subprocess.h"
#include "tests/support/temp_dir.h"

namespace flexkit::testing {
namespace {

namespace fs = std::filesystem;

const std::string kDeployDir = FLEXKIT_DEPLOY_DIR;
const std::string kPluginFile = kDeployDir + "/flexconform-plugin.yaml";

void WriteFile(const std::string& path, const std::string& text,
               fs::perms perms = fs::perms(0644)) {
  fs::create_directories(fs::path(path).parent_path());
  std::ofstream(path, std::ios::binary) << text;
  fs::permissions(path, perms);
}

// ---- the entry point, with Sonobuoy's environment ----

// One node as the plugin's pod sees it: kubelet's plugin dir, the profile
// (Sonobuoy's config-map), the scratch area and the results dir.
class PluginNode {
 public:
  PluginNode() {
    fs::create_directories(PluginDir());
    fs::create_directories(Scratch());
  }
  std::string PluginDir() const { return dir_.Join("plugins"); }
  std::string Scratch() const { return dir_.Join("scratch"); }
  std::string Results() const { return dir_.Join("results"); }
  std::string Profile() const { return dir_.Join("config/profile.yaml"); }
  std::string Join(const std::string& name) const { return dir_.Join(name); }

  // Installs `binary` as kubelet finds it: <plugin dir>/vendor~driver/driver.
  void Install(const std::string& binary, const std::string& vendor, const std::string& driver) {
    const std::string dest = PluginDir() + "/" + vendor + "~" + driver + "/" + driver;
    fs::create_directories(fs::path(dest).parent_path());
    fs::copy_file(binary, dest, fs::copy_options::overwrite_existing);
    fs::permissions(dest, fs::perms(0755));
  }

  ProcessResult Run(const std::string& driver_name,
                    const std::string& flexconform = BuiltBinary("conformance/flexconform"),
                    const std::string& args = "") const {
    RunOptions options;
    options.extra_env = {
        {"SONOBUOY_RESULTS_DIR", Results()}, {"FLEXCONFORM_PLUGIN_DIR", PluginDir()},
        {"FLEXCONFORM_PROFILE", Profile()},  {"FLEXCONFORM", flexconform},
        {"FLEXCONFORM_DRIVER", driver_name}, {"NODE_NAME", "node-a"},
        {"FLEXCONFORM_ARGS", args}};
    options.deadline = std::chrono::seconds(120);
    return RunProcess({kDeployDir + "/flexconform-sonobuoy"}, options);
  }

  // The path in `done`, which must be the report's.
  std::string DoneReport() const {
    const std::string done = Results() + "/done";
    EXPECT_TRUE(fs::exists(done)) << "no done file: Sonobuoy would wait for this node forever";
    const std::string path = flexkit::testing::ReadFileText(done);
    EXPECT_EQ(path, Results() + "/flexconform.xml") << "done names the report (no newline)";
    EXPECT_FALSE(fs::exists(Results() + "/done.tmp"));
    return path;
  }

 private:
  TempDir dir_{"flexkit-sonobuoy"};
};

// The report is one well-formed XML document (Debian Python's parser).
void ExpectWellFormed(const std::string& path) {
  auto r = RunProcess({"/usr/bin/python3", "-c",
                       "import sys, xml.dom.minidom; xml.dom.minidom.parse(sys.argv[1])", path});
  EXPECT_EQ(r.exit_code, 0) << path << " is not well-formed XML: " << r.err << "\n"
                            << flexkit::testing::ReadFileText(path);
}

std::string Testcase(const std::string& xml, const std::string& name) {
  const auto at = xml.find("name=\"" + name + "\"");
  if (at == std::string::npos) return "";
  const auto start = xml.rfind("<testcase", at);
  auto end = xml.find("<testcase", at);
  const auto suite_end = xml.find("</testsuite>", at);
  if (end == std::string::npos || suite_end < end) end = suite_end;
  return xml.substr(start, end - start);
}

TEST(SonobuoyEntryPoint, GradesTheInstalledDriverWithTheLiveNodeCasesAndHandsOverTheReport) {
  FLEXKIT_REQUIRE_ROOT();
  PluginNode node;
  node.Install(BuiltBinary("driver/samples/tmpfs/flexkit-tmpfs"), "flexkit", "tmpfs");
  // The driver comes from the node's plugin dir, not from the profile.
  WriteFile(node.Profile(), "liveNode: {scratch: " + node.Scratch() + "}\nprivileges: root\n");
  const auto started = std::chrono::steady_clock::now();
  // --timeout 10s: a case whose harness stalls is stopped after 70 s
  // (StallLimit), within this test's deadline, and its ERROR says where.
  auto r = node.Run("flexkit/tmpfs", BuiltBinary("conformance/flexconform"),
                    "--random 2 --seed 1 --timeout 10s");
  const auto wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - started);
  std::cout << "entry point, flexkit-tmpfs's live-node cases: " << wall.count() << " s\n";
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("live node: the "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("sequence seed 1 "), std::string::npos) << "FLEXCONFORM_ARGS: " << r.out;
  const std::string report = node.DoneReport();
  ExpectWellFormed(report);
  const std::string xml = flexkit::testing::ReadFileText(report);
  EXPECT_NE(xml.find("<testsuite name=\"flexconform: flexkit/tmpfs\""), std::string::npos) << xml;
  EXPECT_NE(xml.find(node.PluginDir() + "/flexkit~tmpfs/tmpfs"), std::string::npos)
      << "graded the installed driver: " << xml;
  EXPECT_EQ(xml.find("<failure"), std::string::npos) << xml;
  EXPECT_EQ(xml.find("flexconform-sonobuoy"), std::string::npos) << "nothing went wrong: " << xml;
  // Live-node cases run; the others are SKIPs that say why.
  for (const char* ran : {"lifecycle/mount-only", "readonly/write-fails", "sequence/exhaustive"}) {
    const auto tc = Testcase(xml, ran);
    ASSERT_FALSE(tc.empty()) << ran;
    EXPECT_EQ(tc.find("<skipped"), std::string::npos) << tc;
  }
  for (const char* unsafe :
       {"teardown/unmount-after-node-crash", "failover/mount-only-crash-reschedule",
        "faults/isattached-with-backend-unreachable"}) {
    const auto tc = Testcase(xml, unsafe);
    EXPECT_NE(tc.find("<skipped message=\"profile: liveNode: not safe on a live node"),
              std::string::npos)
        << tc;
  }
  // The case dirs were under the scratch area, and are gone.
  for (const auto& entry : fs::directory_iterator(node.Scratch()))
    ADD_FAILURE() << "left in the scratch area: " << entry.path();
}

TEST(SonobuoyEntryPoint, ADriverThatIsNotInstalledIsAFailingReportAndStillADoneFile) {
  PluginNode node;
  WriteFile(node.Profile(), "liveNode: {scratch: " + node.Scratch() + "}\n");
  auto r = node.Run("flexkit/absent");
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  const std::string report = node.DoneReport();
  ExpectWellFormed(report);
  const std::string xml = flexkit::testing::ReadFileText(report);
  EXPECT_NE(xml.find("<failure message=\"driver flexkit/absent is not installed on node node-a: "
                     "no executable " +
                     node.PluginDir() + "/flexkit~absent/absent\""),
            std::string::npos)
      << xml;
  EXPECT_NE(xml.find("tests=\"1\" failures=\"1\""), std::string::npos) << xml;
}

TEST(SonobuoyEntryPoint, FlexconformRefusingTheRunIsAFailingReportWithItsReason) {
  PluginNode node;
  node.Install(BuiltBinary("driver/samples/tmpfs/flexkit-tmpfs"), "flexkit", "tmpfs");
  // No liveNode: the profile would run cases that are not safe on a node.
  WriteFile(node.Profile(), "driver: ./x\nnodes: 1\n");
  auto r = node.Run("flexkit/tmpfs");
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  const std::string xml = flexkit::testing::ReadFileText(node.DoneReport());
  EXPECT_NE(xml.find("flexconform could not grade the driver (exit 2"), std::string::npos) << xml;
  EXPECT_NE(xml.find("has no liveNode key"), std::string::npos) << "flexconform's reason: " << xml;
}

TEST(SonobuoyEntryPoint, AnExitAfterThePartialReportAddsTheFailureToIt) {
  PluginNode node;
  node.Install(BuiltBinary("driver/samples/tmpfs/flexkit-tmpfs"), "flexkit", "tmpfs");
  WriteFile(node.Profile(), "liveNode: {scratch: " + node.Scratch() + "}\n");
  // A flexconform interrupted after its report: the finished cases stay.
  const std::string fake = node.Join("fake-flexconform");
  WriteFile(fake,
            "#!/bin/sh\n"
            "while [ \"$1\" != --junit ]; do shift; done\n"
            "printf '<?xml version=\"1.0\"?>\\n<testsuites>\\n  <testsuite name=\"flexconform: "
            "flexkit/tmpfs\" tests=\"1\">\\n    <testcase name=\"lifecycle/mount-only\"/>\\n  "
            "</testsuite>\\n</testsuites>\\n' >\"$2\"\n"
            "echo 'flexconform: interrupted & <cleaned up>'\n"
            "exit 2\n",
            fs::perms(0755));
  auto r = node.Run("flexkit/tmpfs", fake);
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  const std::string report = node.DoneReport();
  ExpectWellFormed(report);
  const std::string xml = flexkit::testing::ReadFileText(report);
  EXPECT_NE(xml.find("<testcase name=\"lifecycle/mount-only\"/>"), std::string::npos) << xml;
  EXPECT_NE(xml.find("<testsuite name=\"flexconform-sonobuoy: node-a\""), std::string::npos) << xml;
  EXPECT_NE(xml.find("interrupted &amp; &lt;cleaned up&gt;"), std::string::npos)
      << "the output, escaped: " << xml;
}

// ---- the plugin definition ----

// What Sonobuoy's plugin manifest has (pkg/plugin/manifest).
const std::set<std::string> kManifestKeys = {"sonobuoy-config", "spec", "extra-volumes", "podSpec",
                                             "config-map"};
const std::set<std::string> kSonobuoyConfigKeys = {"driver",       "plugin-name",  "result-format",
                                                   "result-files", "skip-cleanup", "description",
                                                   "source-url"};
const std::string kPluginDir = "/usr/libexec/kubernetes/kubelet-plugins/volume/exec";
const std::string kResultsDir = "/tmp/sonobuoy/results";

void CheckKeys(const YAML::Node& map, const std::string& where, const std::set<std::string>& known,
               std::vector<std::string>& problems) {
  if (!map.IsMap()) {
    problems.push_back(where + " is not a mapping");
    return;
  }
  for (const auto& kv : map) {
    const auto key = kv.first.as<std::string>();
    if (!known.count(key))
      problems.push_back(where + ": unknown key '" + key + "' (line " +
                         std::to_string(kv.first.Mark().line + 1) + ")");
  }
}

std::string Str(const YAML::Node& n) { return n && n.IsScalar() ? n.as<std::string>() : ""; }

// Sonobuoy's and flexconform's side of the definition: what kubectl cannot
// know (the sonobuoy-config, the mounts the cases need, the profile).
std::vector<std::string> CheckDefinition(const std::string& text) {
  std::vector<std::string> problems;
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    return {std::string("not YAML: ") + e.what()};
  }
  CheckKeys(root, "the plugin definition", kManifestKeys, problems);
  if (!problems.empty()) return problems;
  const auto config = root["sonobuoy-config"];
  CheckKeys(config, "sonobuoy-config", kSonobuoyConfigKeys, problems);
  if (Str(config["driver"]) != "DaemonSet")
    problems.push_back("sonobuoy-config.driver must be DaemonSet (a pod on every node)");
  if (!std::regex_match(Str(config["plugin-name"]), std::regex("[a-z0-9]([-a-z0-9]*[a-z0-9])?")))
    problems.push_back("sonobuoy-config.plugin-name must be a DNS-1123 label");
  if (Str(config["result-format"]) != "junit")
    problems.push_back("sonobuoy-config.result-format must be junit");

  const auto spec = root["spec"];
  if (!spec.IsMap()) {
    problems.push_back("spec (the container) is missing");
    return problems;
  }
  const bool privileged = spec["securityContext"] && spec["securityContext"]["privileged"] &&
                          spec["securityContext"]["privileged"].as<std::string>() == "true";
  if (!privileged) problems.push_back("spec.securityContext.privileged must be true");
  std::map<std::string, YAML::Node> volumes;
  for (const YAML::Node& v : root["extra-volumes"]) volumes[Str(v["name"])] = v;
  // Sonobuoy adds the results volume to the pod itself.
  std::map<std::string, YAML::Node> mounts;  // by mountPath
  for (const YAML::Node& m : spec["volumeMounts"]) {
    const std::string name = Str(m["name"]), path = Str(m["mountPath"]);
    mounts[path] = m;
    if (name != "results" && !volumes.count(name))
      problems.push_back("volumeMount " + name + ": no such volume in extra-volumes");
    const std::string propagation = Str(m["mountPropagation"]);
    if (!propagation.empty() && propagation != "None" && propagation != "HostToContainer" &&
        propagation != "Bidirectional")
      problems.push_back("volumeMount " + name + ": mountPropagation '" + propagation +
                         "' is not None, HostToContainer or Bidirectional");
    if (propagation == "Bidirectional" && !privileged)
      problems.push_back("volumeMount " + name +
                         ": Bidirectional propagation is refused for an unprivileged container");
  }
  auto host_path_of = [&](const std::string& mount_path) -> std::string {
    auto it = mounts.find(mount_path);
    if (it == mounts.end()) return "";
    auto v = volumes.find(Str(it->second["name"]));
    return v == volumes.end() || !v->second["hostPath"] ? "" : Str(v->second["hostPath"]["path"]);
  };
  if (!mounts.count(kResultsDir) || Str(mounts[kResultsDir]["name"]) != "results")
    problems.push_back("Sonobuoy's results volume must be mounted at " + kResultsDir);
  if (host_path_of(kPluginDir) != kPluginDir)
    problems.push_back("the node's plugin dir must be mounted (hostPath) at " + kPluginDir);

  // The profile in the config-map names the scratch area, which must be
  // the node's (hostPath), with Bidirectional propagation.
  const std::string profile_text = Str(root["config-map"]["profile.yaml"]);
  if (profile_text.empty()) {
    problems.push_back("config-map has no profile.yaml");
    return problems;
  }
  try {
    const auto profile = conform::ParseProfile(profile_text, "config-map profile.yaml", "");
    const std::string scratch = profile.live_node_scratch;
    if (scratch.empty()) problems.push_back("the config-map's profile.yaml has no liveNode");
    if (host_path_of(scratch).empty())
      problems.push_back("liveNode.scratch " + scratch + " must be a hostPath mount");
    else if (Str(mounts[scratch]["mountPropagation"]) != "Bidirectional")
      problems.push_back("the scratch mount " + scratch + " needs mountPropagation Bidirectional");
  } catch (const std::exception& e) {
    problems.push_back(std::string("the config-map's profile.yaml: ") + e.what());
  }
  const auto command = spec["command"];
  if (!command || command.as<std::vector<std::string>>().empty() ||
      command.as<std::vector<std::string>>().back().find("flexconform-sonobuoy") ==
          std::string::npos)
    problems.push_back("spec.command must run flexconform-sonobuoy");
  return problems;
}

// Debian's kubectl (kubernetes-client), where ci/install-deps put it.
std::string Kubectl() {
  if (const char* k = std::getenv("FLEXKIT_KUBECTL")) return k;
  for (const char* candidate : {"/usr/bin/kubectl.debian", "/usr/bin/kubectl"})
    if (::access(candidate, X_OK) == 0) return candidate;
  return "";
}

// The definition's container spec and volumes as the Pod Sonobuoy makes
// of them: the `spec` block becomes the first container and
// `extra-volumes` plus Sonobuoy's results volume the pod's volumes, taken
// as text so that kubectl reads the YAML exactly as Sonobuoy does.
std::string AsPod(const std::string& text) {
  std::map<std::string, std::vector<std::string>> blocks;  // top-level key -> its lines
  std::istringstream in(text);
  std::string line, key;
  while (std::getline(in, line)) {
    if (!line.empty() && line[0] != ' ' && line[0] != '#') {
      key = line.substr(0, line.find(':'));
      continue;
    }
    if (!key.empty()) blocks[key].push_back(line);
  }
  std::string pod =
      "apiVersion: v1\nkind: Pod\nmetadata:\n  name: flexconform-plugin-check\nspec:\n"
      "  containers:\n    -\n";
  for (const auto& l : blocks["spec"]) pod += "    " + l + "\n";
  pod += "  volumes:\n  - name: results\n    emptyDir: {}\n";
  for (const auto& l : blocks["extra-volumes"]) pod += l + "\n";
  return pod;
}

// Every field of `in` must be in `out`: kubectl's typed decoding drops
// what is not a field of the Pod API (a misspelt key).
void Compare(const nlohmann::json& in, const nlohmann::json& out, const std::string& path,
             std::vector<std::string>& problems) {
  if (in.is_object()) {
    for (const auto& [k, v] : in.items()) {
      if (!out.is_object() || !out.contains(k)) {
        problems.push_back(path + "." + k + ": not a field of the Pod API (kubectl dropped it)");
        continue;
      }
      Compare(v, out[k], path + "." + k, problems);
    }
  } else if (in.is_array()) {
    for (std::size_t i = 0; i < in.size(); ++i) {
      if (!out.is_array() || i >= out.size()) {
        problems.push_back(path + "[" + std::to_string(i) + "]: dropped by kubectl");
        continue;
      }
      Compare(in[i], out[i], path + "[" + std::to_string(i) + "]", problems);
    }
  }
}

// kubectl, client-side only: `--local` never asks a server (and the
// kubeconfig names an address nothing listens on). `label` reads the Pod
// as plain YAML (everything kept), `set env` decodes it into the typed Pod
// (wrong types and shapes fail, unknown fields vanish).
std::vector<std::string> KubectlCheck(const std::string& kubectl, const std::string& pod_yaml) {
  TempDir dir("flexkit-kubectl");
  WriteFile(dir.Join("pod.yaml"), pod_yaml);
  WriteFile(dir.Join("kubeconfig"),
            "apiVersion: v1\nkind: Config\nclusters: [{name: none, cluster: {server: "
            "'https://127.0.0.1:9'}}]\nusers: [{name: none, user: {token: none}}]\n"
            "contexts: [{name: none, context: {cluster: none, user: none}}]\n"
            "current-context: none\n");
  RunOptions options;
  options.extra_env = {{"KUBECONFIG", dir.Join("kubeconfig")}, {"HOME", dir.path()}};
  options.deadline = std::chrono::seconds(30);
  auto plain = RunProcess(
      {kubectl, "label", "--local", "-o", "json", "-f", dir.Join("pod.yaml"), "checked=yes"},
      options);
  if (plain.exit_code != 0) return {"kubectl label --local: " + plain.err};
  auto typed = RunProcess({kubectl, "set", "env", "--local", "-o", "json", "-f",
                           dir.Join("pod.yaml"), "FLEXCONFORM_CHECKED=yes"},
                          options);
  if (typed.exit_code != 0) return {"kubectl set env --local: " + typed.err};
  std::vector<std::string> problems;
  auto in = nlohmann::json::parse(plain.out);
  in["metadata"].erase("labels");
  Compare(in, nlohmann::json::parse(typed.out), "pod", problems);
  return problems;
}

std::string Join(const std::vector<std::string>& lines) {
  std::string out;
  for (const auto& l : lines) out += "  " + l + "\n";
  return out;
}

std::string Replace(std::string text, const std::string& from, const std::string& to) {
  const auto at = text.find(from);
  EXPECT_NE(at, std::string::npos) << "the definition has no '" << from << "'";
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

TEST(SonobuoyPlugin, TheDefinitionHasWhatSonobuoyAndTheCasesNeed) {
  EXPECT_EQ(Join(CheckDefinition(flexkit::testing::ReadFileText(kPluginFile))), "");
}

TEST(SonobuoyPlugin, TheDefinitionCheckCatchesEachBreakage) {
  const std::string good = flexkit::testing::ReadFileText(kPluginFile);
  const std::vector<std::pair<std::string, std::string>> breakages = {
      {"result-format: junit", "resultFormat: junit"},
      {"driver: DaemonSet", "driver: Job"},
      {"privileged: true", "privileged: false"},
      {"mountPropagation: Bidirectional", "mountPropagation: Both"},
      {"liveNode: {scratch: /var/lib/flexconform}", "liveNode: {scratch: /var/lib/other}"},
      {"liveNode: {scratch: /var/lib/flexconform}", "liveNode: {scrach: /var/lib/flexconform}"},
      {"name: flexvolume-plugins\n    hostPath", "name: plugins\n    hostPath"},
  };
  for (const auto& [from, to] : breakages) {
    EXPECT_NE(Join(CheckDefinition(Replace(good, from, to))), "") << from << " -> " << to;
  }
}

TEST(SonobuoyPlugin, KubectlDecodesTheContainerSpecOffline) {
  const std::string kubectl = Kubectl();
  if (kubectl.empty())
    GTEST_SKIP()
        << "kubectl is not installed (ci/install-deps installs Debian's kubernetes-client)";
  const std::string good = flexkit::testing::ReadFileText(kPluginFile);
  EXPECT_EQ(Join(KubectlCheck(kubectl, AsPod(good))), "") << AsPod(good);
  // A misspelt field, a wrong type, a list where a mapping goes, YAML that
  // does not parse: each is caught.
  const std::vector<std::pair<std::string, std::string>> breakages = {
      {"mountPropagation: Bidirectional", "mountPropogation: Bidirectional"},
      {"readOnly: true", "readOnly: \"yes\""},
      {"privileged: true", "privileged: [true]"},
      {"      type: DirectoryOrCreate", "      type: DirectoryOrCreate\n      typo: x"},
      {"imagePullPolicy: IfNotPresent", "imagePullPolicy: {IfNotPresent"},
  };
  for (const auto& [from, to] : breakages) {
    EXPECT_NE(Join(KubectlCheck(kubectl, AsPod(Replace(good, from, to)))), "")
        << from << " -> " << to;
  }
}

// ---- the image ----

// The packages each stage of the Dockerfile installs with apt-get.
std::vector<std::set<std::string>> DockerfilePackages(const std::string& dockerfile) {
  std::string joined;  // continuation lines joined, comments dropped
  std::istringstream in(dockerfile);
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    joined += line.back() == '\\' ? line.substr(0, line.size() - 1) + " " : line + "\n";
  }
  std::vector<std::set<std::string>> stages;
  std::istringstream lines(joined);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("FROM ", 0) == 0) stages.emplace_back();
    const auto at = line.find("--no-install-recommends");
    if (at == std::string::npos || stages.empty()) continue;
    std::istringstream words(line.substr(at + std::string("--no-install-recommends").size()));
    for (std::string w; words >> w && w != "&&";)
      if (w[0] != '$') stages.back().insert(w);
  }
  return stages;
}

TEST(SonobuoyImage, BuildsWithCiInstallDepsPackagesAndShipsTheEntryPoint) {
  const std::string dockerfile = flexkit::testing::ReadFileText(kDeployDir + "/Dockerfile");
  const auto stages = DockerfilePackages(dockerfile);
  ASSERT_EQ(stages.size(), 2u) << "a build stage and the image";
  const std::string install_deps =
      flexkit::testing::ReadFileText(kDeployDir + "/../ci/install-deps");
  for (const auto& p : stages[0]) {
    EXPECT_TRUE(std::regex_search(install_deps, std::regex("[ (\n]" + p + "[ \n)]")))
        << p << ": the build stage installs only what ci/install-deps does";
  }
  EXPECT_TRUE(stages[1].count("libyaml-cpp0.7")) << "flexconform's one library outside the base";
  for (const char* copied : {"deploy/flexconform-sonobuoy"}) {
    EXPECT_NE(dockerfile.find(std::string("COPY ") + copied + " /usr/local/bin/"),
              std::string::npos);
    EXPECT_TRUE(fs::exists(kDeployDir + "/../" + copied)) << copied;
  }
  EXPECT_NE(dockerfile.find("COPY --from=build /build/conformance/flexconform /usr/local/bin/"),
            std::string::npos);
  EXPECT_NE(dockerfile.find("--target flexconform"), std::string::npos);
  EXPECT_NE(dockerfile.find("FROM debian:bookworm"), std::string::npos);
}

}  // namespace
}  // namespace flexkit::testing
