// flexconform never fails what kubelet accepts: each driver in controls/
// is correct in a way kubelet tolerates and some drivers in the wild rely
// on, and must be graded with no FAIL. Beside them, drivers flexconform
// must FAIL for the right reason: a defect that does not hide the next,
// shell tools missing in the control plane, invalid base64 accepted by a
// driver that declares secrets.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "tests/support/report_schema.h"
#include "tests/support/subprocess.h"
#include "tests/support/temp_dir.h"

namespace {

const std::string kControls = FLEXKIT_CONTROLS_DIR;

struct Run {
  int exit_code = -1;
  std::string out;
  nlohmann::json doc;
  const nlohmann::json* Case(const std::string& name) const {
    for (const auto& c : doc["cases"]) {
      if (c["name"] == name) return &c;
    }
    return nullptr;
  }
};

Run Flexconform(std::vector<std::string> args) {
  flexkit::testing::TempDir dir("flexconform-control");
  flexkit::testing::RunOptions options;
  options.deadline = std::chrono::seconds(180);
  std::vector<std::string> argv = {flexkit::testing::BuiltBinary("conformance/flexconform"),
                                   "--json",
                                   dir.Join("r.json"),
                                   "--run-root",
                                   dir.path(),
                                   "--seed",
                                   "1",
                                   "--random",
                                   "3"};
  argv.insert(argv.end(), args.begin(), args.end());
  auto r = flexkit::testing::RunProcess(argv, options);
  Run run;
  run.exit_code = r.exit_code;
  run.out = r.out + r.err;
  EXPECT_EQ(flexkit::testing::ReportSchemaProblems(dir.Join("r.json")), "");
  std::ifstream in(dir.Join("r.json"));
  std::stringstream text;
  text << in.rdbuf();
  if (!text.str().empty()) run.doc = nlohmann::json::parse(text.str());
  return run;
}

struct Control {
  std::string name;
  bool attachable;
  std::vector<std::string> warn;  // cases that must WARN (nothing FAILs)
  std::string profile = "";  // default: profile-attach.yaml for an attachable control, else none
};

void PrintTo(const Control& c, std::ostream* os) { *os << c.name; }

class ControlTest : public ::testing::TestWithParam<Control> {};

TEST_P(ControlTest, PassesWithNoFail) {
  FLEXKIT_REQUIRE_ROOT();
  const Control& c = GetParam();
  std::vector<std::string> args = {"--driver", kControls + "/flexkit~" + c.name + "/" + c.name};
  const std::string profile =
      !c.profile.empty() ? c.profile : (c.attachable ? "profile-attach.yaml" : "");
  if (!profile.empty()) args.insert(args.begin(), {"--profile", kControls + "/" + profile});
  auto r = Flexconform(args);
  EXPECT_EQ(r.exit_code, 0) << r.out;
  int passed = 0;
  for (const auto& kase : r.doc["cases"]) {
    const std::string verdict = kase["verdict"];
    EXPECT_TRUE(verdict == "PASS" || verdict == "SKIP" || verdict == "WARN")
        << kase["name"] << ": " << verdict << " " << kase["reason"];
    passed += verdict == "PASS" || verdict == "WARN";
  }
  EXPECT_GE(passed, 15) << r.out;
  for (const auto& name : c.warn) {
    const auto* kase = r.Case(name);
    ASSERT_NE(kase, nullptr) << name;
    EXPECT_EQ((*kase)["verdict"], "WARN") << name << ": " << (*kase)["reason"];
  }
}

INSTANTIATE_TEST_SUITE_P(
    Controls, ControlTest,
    ::testing::Values(
        // kubelet ignores a pod dir the driver removed (protocol §5.8).
        Control{"removes-dir", false, {}},
        // No declared secrets: invalid base64 (which kubelet never sends) is a WARN.
        Control{"no-secrets", false, {"secrets/invalid-base64-is-failure"}},
        // Reads only `password` (none with --driver alone, so the invalid
        // secret is accepted: a WARN) and keeps a file beside the pod dir
        // until its unmount, which every teardown of a mount runs.
        Control{"declared-secrets", false, {"secrets/invalid-base64-is-failure"}},
        // Read-only by design: asked for ro, no write goes through, but the
        // mount options say rw; [sequence] judges the write, not the flag.
        Control{"ro-by-design", false, {"secrets/invalid-base64-is-failure"}},
        // Go decodes "Status" and ignores the padding: WARN for the key only.
        Control{"padded-status", false, {"protocol/init-reply", "lifecycle/mount-only"}},
        // A volume that is a directory the driver fills (podVolume:
        // directory), as gitRepo is: kubelet never asks for a mount.
        Control{"directory-volume",
                false,
                {"secrets/invalid-base64-is-failure"},
                "profile-directory.yaml"},
        // attach Not supported: device "", mountdevice does the work,
        // unmountdevice removes the global dir.
        Control{"attach-not-supported", true, {}},
        // attach with no device, waitforattach "" echoed, isattached Not supported.
        Control{"attach-no-device", true, {}},
        // Kubelet-managed attach: isattached always true (nothing runs it),
        // unmountdevice failing where the path is no mount point (kubelet
        // never calls it there).
        Control{"kubelet-attach-loose",
                true,
                {"teardown/unmountdevice-never-mounted", "idempotency/teardown-verbs-repeated",
                 "sequence/exhaustive"},
                "profile-kubelet-attach.yaml"},
        // Kubelet-managed attach on two nodes sharing the store (RWX), each
        // node's attachment records on that node:
        // isattached is false of another node's attachment, and kubelet
        // asks a node only about itself.
        Control{"isattached-own-node", true, {}, "profile-kubelet-attach-shared.yaml"},
        // Controller-managed attach, two nodes sharing the store: isattached
        // always true, as kubernetes' e2e dummy-attachable. The controller
        // asks only of volumes it believes attached, so the [failover] and
        // [sequence] witnesses, which ask every node, learn nothing from it:
        // WARNs, where they used to FAIL F14.
        Control{"isattached-always-true",
                true,
                {"lifecycle/attachable", "failover/crash-reschedule-controller-rwo-pv",
                 "failover/node-returns-before-move-controller", "sequence/exhaustive",
                 "sequence/random"},
                "profile-attach-shared.yaml"},
        // isattached Failure of a volume attached nowhere (a backend lookup
        // that finds nothing): a question the controller never asks.
        Control{"isattached-unknown-fails",
                true,
                {"sequence/exhaustive", "sequence/random"},
                "profile-attach-shared.yaml"}),
    [](const auto& control_info) {
      std::string name = control_info.param.name;
      for (auto& ch : name) {
        if (ch == '-') ch = '_';
      }
      return name;
    });

// A case lists every rule it saw broken: the stray stderr line of mount
// (F1) does not hide that the mount ignored read-only (F18).
TEST(Verdicts, OneDefectDoesNotHideTheNext) {
  FLEXKIT_REQUIRE_ROOT();
  auto r = Flexconform({"--driver", kControls + "/flexkit~two-defects/two-defects", "--focus",
                        "readonly/write-fails|lifecycle/mount-only"});
  EXPECT_EQ(r.exit_code, 1) << r.out;
  const auto* ro = r.Case("readonly/write-fails");
  ASSERT_NE(ro, nullptr) << r.out;
  EXPECT_EQ((*ro)["verdict"], "FAIL");
  std::string rules;
  for (const auto& rule : (*ro)["rules"]) rules += rule.get<std::string>() + "\n";
  EXPECT_NE(rules.find("F1/F2/F3"), std::string::npos) << rules;
  EXPECT_NE(rules.find("F18"), std::string::npos) << rules;
  // The summary counts distinct rules: F1 is broken by both cases, once.
  int f1 = 0;
  for (const auto& e : r.doc["rules_broken"]) {
    if (e["rule"].get<std::string>().rfind("F1/F2/F3", 0) == 0) {
      ++f1;
      EXPECT_EQ(e["cases"].size(), 2u) << e;
    }
  }
  EXPECT_EQ(f1, 1) << r.doc["rules_broken"];
  EXPECT_NE(r.out.find("distinct rules broken"), std::string::npos) << r.out;
}

// kube-controller-manager has no jq: a shell driver whose attach needs it
// FAILs with controller-managed attach, WARNs with kubelet-managed.
TEST(Verdicts, ControllerVerbsRunWithoutShellTools) {
  FLEXKIT_REQUIRE_ROOT();
  const std::string focus = "protocol/controller-verbs-without-shell-tools";
  auto controller =
      Flexconform({"--profile", kControls + "/profile-controller.yaml", "--focus", focus});
  const auto* c = controller.Case(focus);
  ASSERT_NE(c, nullptr) << controller.out;
  EXPECT_EQ((*c)["verdict"], "FAIL") << controller.out;
  EXPECT_EQ((*c)["rule"].get<std::string>().rfind("F2 controller-path: ", 0), 0u) << (*c)["rule"];
  EXPECT_EQ(controller.exit_code, 1);

  auto kubelet =
      Flexconform({"--profile", kControls + "/../mutants/profile-attach.yaml", "--focus", focus});
  const auto* k = kubelet.Case(focus);
  ASSERT_NE(k, nullptr) << kubelet.out;
  EXPECT_EQ((*k)["verdict"], "WARN") << kubelet.out;
  EXPECT_NE((*k)["reason"].get<std::string>().find("kubelet-managed"), std::string::npos);
  EXPECT_EQ(kubelet.exit_code, 0);
}

// With --driver alone (controller-managed attach), a driver whose attach
// needs jq gets one control-plane finding, in its own case; every other
// case runs the controller's verbs where the driver can run, so its
// mountdevice that ignores read-only is found too.
TEST(Verdicts, AMissingControllerToolIsOneFindingAndHidesNothing) {
  FLEXKIT_REQUIRE_ROOT();
  auto r = Flexconform({"--driver",
                        kControls + "/../mutants/mutant~attach-ro-global-rw/attach-ro-global-rw",
                        "--focus", "^protocol/|^readonly/"});
  EXPECT_EQ(r.exit_code, 1) << r.out;
  int control_plane_findings = 0;
  for (const auto& kase : r.doc["cases"]) {
    for (const auto& rule : kase["rules"]) {
      if (rule.get<std::string>().find("kube-controller-manager") != std::string::npos) {
        ++control_plane_findings;
        EXPECT_EQ(kase["name"], "protocol/controller-verbs-without-shell-tools");
      }
    }
  }
  EXPECT_EQ(control_plane_findings, 1) << r.out;
  const auto* ro = r.Case("readonly/global-path-read-only");
  ASSERT_NE(ro, nullptr) << r.out;
  EXPECT_EQ((*ro)["verdict"], "FAIL") << (*ro)["reason"];
  EXPECT_EQ((*ro)["rule"].get<std::string>().rfind("F18", 0), 0u) << (*ro)["rule"];
}

// A driver that evals only the secret it reads (password) is caught once
// the hostile values go into the declared secret.
TEST(Verdicts, HostileValuesGoIntoTheDeclaredSecrets) {
  FLEXKIT_REQUIRE_ROOT();
  const std::string focus = "robustness/hostile-secret-values";
  auto r = Flexconform({"--profile", kControls + "/profile-secrets.yaml", "--driver",
                        kControls + "/../mutants/mutant~secret-eval-declared/secret-eval-declared",
                        "--focus", focus});
  const auto* c = r.Case(focus);
  ASSERT_NE(c, nullptr) << r.out;
  EXPECT_EQ((*c)["verdict"], "FAIL") << r.out;
  EXPECT_EQ((*c)["rule"].get<std::string>().rfind("F24", 0), 0u) << (*c)["rule"];
  EXPECT_NE((*c)["reason"].get<std::string>().find("secret password"), std::string::npos)
      << (*c)["reason"];
}

// attach-by-hostname keys attachments on the hostname it runs under, not
// the node it is given: right where kubelet attaches, on the node; where
// the controller attaches, on the control plane, whose hostname it then
// records, so no node can mount the volume.
TEST(Verdicts, AttachKeyedOnTheHostnameFailsOnlyWhereTheControllerAttaches) {
  FLEXKIT_REQUIRE_ROOT();
  const std::string driver = kControls + "/flexkit~attach-by-hostname/attach-by-hostname";
  const std::string focus = "lifecycle/attachable|sequence/exhaustive";
  auto kubelet = Flexconform({"--profile", kControls + "/profile-kubelet-attach.yaml", "--driver",
                              driver, "--focus", focus});
  EXPECT_EQ(kubelet.exit_code, 0) << kubelet.out;
  const auto* k = kubelet.Case("lifecycle/attachable");
  ASSERT_NE(k, nullptr) << kubelet.out;
  // WARN at most: its isattached always answers true (kubelet never asks).
  EXPECT_NE((*k)["verdict"], "FAIL") << (*k)["reason"];

  auto controller = Flexconform({"--profile", kControls + "/profile-attach-shared.yaml", "--driver",
                                 driver, "--focus", focus});
  EXPECT_EQ(controller.exit_code, 1) << controller.out;
  for (const std::string name : {"lifecycle/attachable", "sequence/exhaustive"}) {
    const auto* c = controller.Case(name);
    ASSERT_NE(c, nullptr) << controller.out;
    EXPECT_EQ((*c)["verdict"], "FAIL") << name;
    EXPECT_NE((*c)["reason"].get<std::string>().find("attached to control-plane, not to node"),
              std::string::npos)
        << name << ": " << (*c)["reason"];
  }
}

// The shared-store control lets a second node attach while the first has
// the volume: right for a volume several nodes may mount (its profile says
// accessMode ReadWriteMany: PASS above), F14 under the default single
// attach.
TEST(Verdicts, ASharedVolumeNotDeclaredReadWriteManyIsF14) {
  FLEXKIT_REQUIRE_ROOT();
  flexkit::testing::TempDir dir("flexconform-rwo");
  std::ifstream shared(kControls + "/profile-kubelet-attach-shared.yaml");
  std::ofstream rwo(dir.Join("profile.yaml"));
  for (std::string line; std::getline(shared, line);) {
    if (line.rfind("accessMode:", 0) == 0) continue;
    if (line.rfind("driver:", 0) == 0)
      line = "driver: " + kControls + "/flexkit~isattached-own-node/isattached-own-node";
    rwo << line << "\n";
  }
  rwo.close();
  const std::string focus = "^failover/attach-refused-while-owner-alive-kubelet-rwo-pv\\b";
  auto r = Flexconform({"--profile", dir.Join("profile.yaml"), "--focus", focus});
  EXPECT_EQ(r.exit_code, 1) << r.out;
  const auto* c = r.Case("failover/attach-refused-while-owner-alive-kubelet-rwo-pv");
  ASSERT_NE(c, nullptr) << r.out;
  EXPECT_EQ((*c)["verdict"], "FAIL") << (*c)["reason"];
  EXPECT_EQ((*c)["rule"].get<std::string>().rfind("F14", 0), 0u) << (*c)["rule"];
}

// The directory-volume control without its profile's podVolume: directory
// is a mount that mounted nothing: FAIL, as for a driver whose mount
// ignores its errors.
TEST(Verdicts, ADirectoryVolumeNotDeclaredSoIsAMountThatMountedNothing) {
  FLEXKIT_REQUIRE_ROOT();
  auto r = Flexconform({"--driver", kControls + "/flexkit~directory-volume/directory-volume",
                        "--focus", "^lifecycle/mount-only\\b"});
  EXPECT_EQ(r.exit_code, 1) << r.out;
  const auto* c = r.Case("lifecycle/mount-only");
  ASSERT_NE(c, nullptr) << r.out;
  EXPECT_EQ((*c)["verdict"], "FAIL");
  EXPECT_NE((*c)["reason"].get<std::string>().find("is not a mount point"), std::string::npos)
      << (*c)["reason"];
}

// In a failover with kubelet-managed attach nothing runs isattached: the
// witness's isattached runs as kubelet never calls it, not with the
// controller's empty PATH, so a driver needing jq there breaks no rule.
TEST(Verdicts, AKubeletManagedFailoverJudgesNoControllerPath) {
  FLEXKIT_REQUIRE_ROOT();
  auto r = Flexconform({"--profile", kControls + "/profile-controller.yaml", "--focus",
                        "^failover/crash-reschedule-kubelet-inline\\b"});
  const auto* c = r.Case("failover/crash-reschedule-kubelet-inline");
  ASSERT_NE(c, nullptr) << r.out;
  for (const auto& rule : (*c)["rules"]) {
    EXPECT_EQ(rule.get<std::string>().rfind("F2 controller-path", 0), std::string::npos) << rule;
    EXPECT_EQ(rule.get<std::string>().rfind("F1/F2/F3", 0), std::string::npos) << rule;
  }
}

// Invalid base64 accepted: a FAIL for a driver that declares secrets, a
// WARN for one that declares none.
TEST(Verdicts, InvalidBase64FailsOnlyWhereSecretsAreDeclared) {
  FLEXKIT_REQUIRE_ROOT();
  const std::string focus = "secrets/invalid-base64-is-failure";
  const std::string mutant =
      kControls + "/../mutants/mutant~secret-invalid-accepted/secret-invalid-accepted";
  auto declared = Flexconform(
      {"--profile", kControls + "/profile-secrets.yaml", "--driver", mutant, "--focus", focus});
  ASSERT_NE(declared.Case(focus), nullptr) << declared.out;
  EXPECT_EQ((*declared.Case(focus))["verdict"], "FAIL") << declared.out;
  auto undeclared = Flexconform(
      {"--profile", kControls + "/../mutants/profile.yaml", "--driver", mutant, "--focus", focus});
  ASSERT_NE(undeclared.Case(focus), nullptr) << undeclared.out;
  EXPECT_EQ((*undeclared.Case(focus))["verdict"], "WARN") << undeclared.out;
}

// The invalid value goes into the secret the profile declares, the one the
// driver reads: a driver that ignores every other key and refuses an
// invalid `password` PASSes. (With no profile it accepts the suite's own
// key, a WARN; its state file is gone because the driver's unmount ran:
// the ControlTest entry.)
TEST(Verdicts, InvalidBase64GoesIntoTheDeclaredSecrets) {
  FLEXKIT_REQUIRE_ROOT();
  const std::string focus = "secrets/invalid-base64-is-failure";
  auto r = Flexconform(
      {"--profile", kControls + "/profile-declared-secrets.yaml", "--focus", "^secrets/"});
  EXPECT_EQ(r.exit_code, 0) << r.out;
  ASSERT_NE(r.Case(focus), nullptr) << r.out;
  EXPECT_EQ((*r.Case(focus))["verdict"], "PASS") << r.out;
}

}  // namespace

// A driver in a plain folder (not vendor~driver) that sources a helper
// beside it: the hot install installs the helper with it and says so.
TEST(Verdicts, AHotInstallCopiesTheHelpersOfADriverInAPlainFolder) {
  FLEXKIT_REQUIRE_ROOT();
  flexkit::testing::TempDir plain("flexconform-plain-folder");
  for (const char* file : {"no-secrets", "tmpfs-lib.sh"}) {
    std::filesystem::copy_file(kControls + "/flexkit~no-secrets/" + file, plain.Join(file));
  }
  const std::string focus = "install/hot-install-during-probe";
  auto r = Flexconform({"--driver", plain.Join("no-secrets"), "--focus", focus});
  const auto* c = r.Case(focus);
  ASSERT_NE(c, nullptr) << r.out;
  EXPECT_EQ((*c)["verdict"], "PASS") << (*c)["reason"];
  EXPECT_NE(c->dump().find("tmpfs-lib.sh"), std::string::npos)
      << "the transcript names the helper installed";
}
