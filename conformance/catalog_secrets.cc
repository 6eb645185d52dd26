// [secrets]: values from kubernetes.io/secret/* (base64, mount only) are
// accepted, invalid base64 is a Failure, and no secret value (raw or
// base64) appears in any reply (F20, F21). The suite itself never prints
// one: transcripts and reports are redacted. kubelet always base64-encodes
// secrets (cluster-facts §1), so invalid base64 never reaches a driver in
// production: accepting it is a FAIL only for a driver whose profile
// declares secrets (it reads them, and should check them); for any other
// driver (and with no profile) it is a WARN.
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <vector>

#include "conformance/catalog.h"
#include "conformance/helper_calls.h"
#include "simulator/options_builder.h"

namespace flexkit::conform {
namespace {

void SecretsNotLeaked(CaseContext& c) {
  auto& n = c.node();
  auto pod = c.Pod("pod");
  const std::string secret = "flexconform-s3cret-" + c.Unique("v");
  c.AddSecret(secret);
  pod.secret["flexconform-password"] = secret;
  auto v = c.SetUp(n, c.Volume(c.Unique("vol")), pod);
  if (!v.driver_mounted)
    c.Skip("capability: mount is Not supported, so the driver never sees secrets");
  CheckDataRoundTrip(c, v);
  TearDownAll(c);
}

// Where a driver puts a secret it decoded: the mount table (a mount
// helper's source or options), files in the volume, and files it writes
// in the node's common scratch places (a credentials file); the case adds
// what its mount helpers got (helper_calls.h). Each file up
// to 1 MiB, found within two levels.
std::map<std::string, std::string> PlacesADecodedSecretGoes(CaseContext& c, sim::Node& n,
                                                            const std::string& pod_dir) {
  std::map<std::string, std::string> places;
  auto read = [](const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::string text;
    text.resize(1 << 20);
    in.read(text.data(), static_cast<std::streamsize>(text.size()));
    text.resize(static_cast<std::size_t>(in.gcount()));
    return text;
  };
  places["the mount table (mountinfo)"] =
      read("/proc/" + std::to_string(n.holder_pid()) + "/mountinfo");
  for (const std::string& dir : {pod_dir, std::string("/tmp"), std::string("/run")}) {
    std::error_code ec;
    const std::string root = CaseContext::HostPath(n, dir);
    std::filesystem::recursive_directory_iterator it(
        root, std::filesystem::directory_options::skip_permission_denied, ec);
    for (; !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
      if (it.depth() >= 2) it.disable_recursion_pending();
      if (!it->is_regular_file(ec) || it->file_size(ec) > (1u << 20)) continue;
      const std::string path = it->path().string();
      // The case's own dirs hold the transcripts and the fixture's state.
      if (path.find(c.case_dir()) != std::string::npos) continue;
      places[dir + path.substr(root.size())] = read(path);
    }
  }
  return places;
}

// Whether `encoded` appears in `text` other than as the value of a
// kubernetes.io/secret/ key (the options JSON a driver logs or keeps: the
// secret stored as kubelet sent it, not used undecoded).
bool UsedUndecoded(const std::string& text, const std::string& encoded) {
  for (std::size_t at = text.find(encoded); at != std::string::npos;
       at = text.find(encoded, at + 1)) {
    const std::size_t from = at > 200 ? at - 200 : 0;
    const std::string before = text.substr(from, at - from);
    const std::size_t key = before.rfind(sim::kSecretKeyPrefix);
    if (key == std::string::npos || before.find_first_of(",{}", key) != std::string::npos)
      return true;
  }
  return false;
}

// kubelet sends each secret base64-encoded; a driver that hands the
// encoded form to its backend (a mount helper's password, a credentials
// file) authenticates with the wrong value. Judged by where the driver put
// it. With no secrets declared, two names drivers commonly read get
// values of the suite's own.
void SecretsDecodedBeforeUse(CaseContext& c) {
  auto& n = c.node();
  auto pod = c.Pod("pod");
  if (pod.secret.empty()) {
    for (const std::string key : {"username", "password"}) {
      pod.secret[key] = "flexconform-" + key + "-" + c.Unique("v");
      c.AddSecret(pod.secret[key]);
    }
  }
  HelperRecorder helpers(n, c.case_dir(), MountHelperDirs(c));
  auto v = c.SetUp(n, c.Volume(c.Unique("vol")), pod);
  if (!v.driver_mounted)
    c.Skip("capability: mount is Not supported, so the driver never sees secrets");
  auto places = PlacesADecodedSecretGoes(c, n, v.pod_dir);
  for (const auto& call : helpers.Calls()) {
    const std::string helper = std::filesystem::path(call.argv.front()).filename().string();
    std::string argv;
    for (const auto& a : call.argv) argv += (argv.empty() ? "" : " ") + a;
    places["the argv of " + helper] += argv + "\n";
    places["the environment of " + helper] += call.environment;
  }
  for (const auto& [key, raw] : pod.secret) {
    const std::string encoded = sim::Base64(raw);
    // Too short to tell from other text.
    if (encoded.size() < 8) continue;
    for (const auto& [where, text] : places) {
      if (!UsedUndecoded(text, encoded)) continue;
      c.Record("F20 secrets-decoded: secrets are base64; the driver decodes them",
               "secret " + key +
                   " was used undecoded: its base64 form, as kubelet sent it, is in " + where +
                   " where the driver put the secret");
      break;
    }
  }
  CheckDataRoundTrip(c, v);
  TearDownAll(c);
}

// The invalid value goes into every secret the profile declares, the keys
// the driver reads (a driver need not look at a key it does not use); with
// none declared, into a key of the suite's own.
void InvalidBase64IsFailure(CaseContext& c) {
  auto& n = c.node();
  auto spec = c.Volume(c.Unique("vol"));
  auto pod = c.Pod("pod");
  const std::string invalid = "!!not*base64-" + c.Unique("s") + "!!";
  c.AddSecret(invalid);
  std::vector<std::string> keys;
  for (const auto& [key, value] : c.profile().secrets) keys.push_back(key);
  if (keys.empty()) keys.push_back("flexconform-password");
  std::string key_list;
  for (const auto& key : keys) {
    pod.secret.erase(key);
    spec.options[std::string(sim::kSecretKeyPrefix) + key] = invalid;
    key_list += (key_list.empty() ? "" : ", ") + key;
  }
  const std::string dir = c.Paths(n).PodVolumeDir(pod.pod_uid, spec.name);
  n.filesystem().MakeDirs(dir, 0750);
  c.tracker().Push("remove " + dir, [&n, dir] {
    if (!n.filesystem().PathExists(dir)) return;  // the driver's unmount removed it
    if (n.filesystem().IsMountPoint(dir)) n.filesystem().Unmount(dir);
    n.filesystem().RemoveDir(dir);
  });
  // kubelet never sends invalid base64, so what the reply looks like (a
  // panic's trace, a shell error) is a WARN; a Success is judged below, and
  // a secret in the reply is a FAIL as in any call.
  auto r = c.beyond_kubelet().CallMount(n, spec, pod, dir);
  if (r.not_supported())
    c.Skip("capability: mount is Not supported, so the driver never sees secrets");
  if (r.ok()) {
    // kubelet tears a mounted volume down with the driver's unmount, which
    // may clean up what the mount left (a credentials file, say).
    c.TrackPodTeardown(n, dir);
    const std::string why = "mount with an invalid base64 secret succeeded";
    if (c.profile().secrets.empty()) {
      c.Warn(why +
             " (the profile declares no secrets, so the driver may ignore them; kubelet "
             "never sends invalid base64)");
    } else {
      c.Fail("F20 secrets-base64: secrets are base64; an invalid one is a Failure",
             why + " (invalid in every declared secret: " + key_list + ")");
    }
  }
  TearDownAll(c);
}

}  // namespace

void AddSecretsCases(std::vector<Case>& cases) {
  cases.push_back({"secrets/accepted-and-never-leaked",
                   {"secrets", "root"},
                   {"F20", "F21"},
                   Always,
                   SecretsNotLeaked});
  cases.push_back({"secrets/decoded-before-use",
                   {"secrets", "root"},
                   {"F20"},
                   Always,
                   SecretsDecodedBeforeUse});
  cases.push_back({"secrets/invalid-base64-is-failure",
                   {"secrets", "root"},
                   {"F20", "F21", "F30"},
                   Always,
                   InvalidBase64IsFailure});
}

}  // namespace flexkit::conform
