// Kubernetes YAML into cluster objects, and how a pod volume resolves.
#include "simulator/manifest.h"

#include <gtest/gtest.h>

namespace flexkit::sim {
namespace {

const char* kManifest = R"(
apiVersion: v1
kind: PersistentVolume
metadata: {name: pv-1}
spec:
  accessModes: [ReadWriteOnce]
  flexVolume:
    driver: rancher.io/convoy
    fsType: xfs
    readOnly: true
    secretRef: {name: creds, namespace: vault}
    options: {size: 10G, volumeType: gp2}
---
kind: PersistentVolumeClaim
metadata: {name: c, namespace: apps}
spec: {volumeName: pv-1}
---
kind: Secret
metadata: {name: creds, namespace: vault}
type: rancher.io/convoy
data: {password: aHVudGVyMg==}
stringData: {user: admin}
---
kind: Node
metadata:
  name: n2
  annotations: {volumes.kubernetes.io/controller-managed-attach-detach: "false"}
---
kind: Pod
metadata: {name: p, namespace: apps}
spec:
  nodeName: n1
  serviceAccountName: robot
  securityContext: {fsGroup: 2000}
  volumes:
    - name: data
      persistentVolumeClaim: {claimName: c, readOnly: false}
    - name: scratch
      flexVolume: {driver: k8s/dummy, readOnly: true}
    - name: cache
      emptyDir: {}
)";

TEST(SimulatorManifest, ParsesEveryKind) {
  Manifest m = ParseManifest(kManifest);
  ASSERT_EQ(m.pvs.size(), 1u);
  EXPECT_EQ(m.pvs[0].flex.options.at("size"), "10G");
  EXPECT_EQ(m.pvs[0].flex.secret_namespace, "vault");
  ASSERT_EQ(m.secrets.size(), 1u);
  EXPECT_EQ(m.secrets[0].data.at("password"), "hunter2");
  EXPECT_EQ(m.secrets[0].data.at("user"), "admin");
  ASSERT_EQ(m.nodes.size(), 1u);
  EXPECT_FALSE(m.nodes[0].controller_managed_attach);
  ASSERT_EQ(m.pods.size(), 1u);
  EXPECT_EQ(m.pods[0].uid, "uid-apps-p");
  EXPECT_EQ(m.pods[0].service_account, "robot");
  EXPECT_EQ(*m.pods[0].fs_group, 2000);
  EXPECT_EQ(m.pods[0].volumes.size(), 2u);  // emptyDir is not ours
}

TEST(SimulatorManifest, PvReadOnlyComesFromTheClaimNotThePv) {
  Manifest m = ParseManifest(kManifest);
  ClusterState s;
  s.pvs["pv-1"] = m.pvs[0];
  s.pvcs["apps/c"] = m.pvcs[0];
  ResolvedVolume pv = s.Resolve(m.pods[0], m.pods[0].volumes[0]);
  EXPECT_EQ(pv.spec.name, "pv-1");
  EXPECT_FALSE(pv.spec.read_only);
  EXPECT_FALSE(pv.spec.inline_volume);
  EXPECT_TRUE(pv.spec.read_write_once_only);
  ResolvedVolume inline_volume = s.Resolve(m.pods[0], m.pods[0].volumes[1]);
  EXPECT_EQ(inline_volume.spec.name, "scratch");
  EXPECT_TRUE(inline_volume.spec.read_only);
  EXPECT_TRUE(inline_volume.spec.inline_volume);
}

TEST(SimulatorManifest, MissingClaimIsNamed) {
  Manifest m = ParseManifest(kManifest);
  ClusterState s;
  try {
    s.Resolve(m.pods[0], m.pods[0].volumes[0]);
    FAIL() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()), "pod apps/p volume data: claim c not found");
  }
}

TEST(SimulatorManifest, UnsupportedKindNamesTheDocument) {
  try {
    ParseManifest("kind: Deployment\nmetadata: {name: d}\n");
    FAIL() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()),
              "manifest document 1 (Deployment d): kind \"Deployment\" is not supported");
  }
}

}  // namespace
}  // namespace flexkit::sim
