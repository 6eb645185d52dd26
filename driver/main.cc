// convoy-flexvolume: the FlexVolume driver for Convoy, run by kubelet as
// <plugindir>/rancher.io~convoy/convoy. Besides the FlexVolume verbs it
// answers `install --plugin-dir DIR`, `version` (`--version`) and `--help`.
#include <unistd.h>

#include <cstring>
#include <string>

#include "driver/convoy/install.h"
#include "driver/convoy/system_driver.h"
#include "driver/sdk/exec_driver.h"

namespace {

constexpr const char* kUsage =
    "convoy-flexvolume: the Kubernetes FlexVolume driver for the Convoy volume daemon (EBS, VFS)\n"
    "\n"
    "Usage:\n"
    "  convoy-flexvolume install --plugin-dir DIR   install as DIR/rancher.io~convoy/convoy "
    "(atomic)\n"
    "  convoy-flexvolume version | --version        print the version\n"
    "  convoy-flexvolume VERB ARGS...               a FlexVolume call, as kubelet makes it:\n"
    "      init | attach JSON NODE | detach VOLUME NODE | waitforattach DEVICE JSON |\n"
    "      isattached JSON NODE | mountdevice DIR DEVICE JSON | unmountdevice DIR |\n"
    "      mount DIR JSON | unmount DIR\n"
    "    It prints one JSON reply and exits 0 (Success, Not supported) or 1 (Failure).\n"
    "\n"
    "Volume options (PV or inline flexVolume.options):\n"
    "  convoyDriver  ebs (default) or vfs     volumeID    an existing EBS volume (vol-...)\n"
    "  size          1Gi, 500Mi, bytes        volumeType  gp2 io1 standard st1 sc1\n"
    "  iops          for io1                  name        Convoy name (default: the PV name)\n"
    "  fsType        ext4 (default) or xfs    readOnly    honoured (kubernetes.io/readwrite)\n"
    "  (xfs and EBS take-over need a Convoy with the Kubernetes extensions, not stock v0.5.2)\n"
    "\n"
    "Configuration: /etc/convoy-flexvolume/config.json (no file there: every default), or\n"
    "the file $CONVOY_FLEXVOLUME_CONFIG names (which must exist); every key is optional\n"
    "(defaults shown):\n"
    "  socket          /var/run/convoy/convoy.sock   this node's Convoy daemon\n"
    "  nodeSockets     {\"node-a\": \"/run/convoy/a.sock\"}   attach/detach/isattached per node\n"
    "  socketTemplate  \"/run/convoy/{node}.sock\"   ... or by template\n"
    "  mode            attach | mount              mount: mount-only (no attach verbs)\n"
    "  timeouts        {\"connect\": \"5s\", \"request\": \"2m\", \"waitforattach\": \"2m\"}\n"
    "  logFile         (empty: syslog)             e.g. /var/log/convoy-flexvolume.log\n"
    "  stateDir        /var/lib/convoy-flexvolume  what the driver remembers per volume\n"
    "  api             auto | stock | extended     auto: asked of each daemon\n"
    "\n"
    "Exit codes: 0 Success or Not supported, 1 Failure (a FlexVolume call); install and\n"
    "version: 0 done, 1 failed, 2 usage error.\n";

constexpr const char* kPluginDirHint =
    "the directory kubelet probes (its --volume-plugin-dir, by default\n"
    "/usr/libexec/kubernetes/kubelet-plugins/volume/exec)";

void Print(int fd, const std::string& text) {
  size_t done = 0;
  while (done < text.size()) {
    ssize_t n = write(fd, text.data() + done, text.size() - done);
    if (n <= 0) return;
    done += static_cast<size_t>(n);
  }
}

int Install(int argc, char** argv) {
  std::string plugin_dir;
  for (int i = 2; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      Print(1,
            "convoy-flexvolume install --plugin-dir DIR\n"
            "  Copies this binary to DIR/rancher.io~convoy/convoy atomically (a temporary file\n"
            "  renamed into place, so kubelet's probe never runs a half-written driver) and\n"
            "  does nothing when the same binary is already there. DIR is kubelet's\n"
            "  --volume-plugin-dir (default /usr/libexec/kubernetes/kubelet-plugins/volume/exec)\n"
            "  and must exist.\n"
            "Exit codes: 0 installed or already installed, 1 the copy failed, 2 usage error.\n");
      return 0;
    }
    if (arg == "--plugin-dir" && i + 1 < argc) {
      plugin_dir = argv[++i];
    } else if (arg == "--plugin-dir") {
      Print(2, std::string("convoy-flexvolume install: --plugin-dir needs a value: ") +
                   kPluginDirHint + "\n");
      return 2;
    } else if (arg.rfind("--plugin-dir=", 0) == 0) {
      plugin_dir = arg.substr(std::strlen("--plugin-dir="));
    } else {
      Print(2, "convoy-flexvolume install: unexpected argument \"" + arg +
                   "\" (usage: convoy-flexvolume install --plugin-dir DIR; see --help)\n");
      return 2;
    }
  }
  if (plugin_dir.empty()) {
    Print(2, std::string("convoy-flexvolume install: --plugin-dir DIR is required: ") +
                 kPluginDirHint + "\n");
    return 2;
  }
  try {
    const auto result = convoy_flexvolume::InstallDriver("/proc/self/exe", plugin_dir,
                                                         "rancher.io~convoy", "convoy");
    Print(1, std::string(result == convoy_flexvolume::InstallResult::kInstalled
                             ? "installed "
                             : "already installed: ") +
                 plugin_dir + "/rancher.io~convoy/convoy\n");
    return 0;
  } catch (const std::exception& e) {
    Print(2, std::string("convoy-flexvolume install: ") + e.what() + "\n");
    return 1;
  }
}

}  // namespace

int main(int argc, char** argv) {
  const std::string first = argc > 1 ? argv[1] : "";
  if (first == "install") return Install(argc, argv);
  if (first == "version" || first == "--version") {
    Print(1, std::string("convoy-flexvolume ") + FLEXKIT_VERSION + "\n");
    return 0;
  }
  if (first == "--help" || first == "-h") {
    Print(1, kUsage);
    return 0;
  }

  convoy_flexvolume::SystemConvoyDriver system("convoy-flexvolume");
  flexvolume::ExecDriver(system.driver, argc, argv, system.exec);
}
