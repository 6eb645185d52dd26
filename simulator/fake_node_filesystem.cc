#include "simulator/fake_node_filesystem.h"

#include <sys/mount.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

namespace flexkit::sim {

std::unique_ptr<Node> FakeNodeFilesystem::MakeNode(const std::string& name,
                                                   const std::string& run_dir,
                                                   std::map<std::string, std::string> env) {
  auto filesystem = std::make_unique<FakeNodeFilesystem>();
  auto holder = std::make_unique<FakeNamespaceHolder>(*filesystem);
  return std::make_unique<Node>(name, run_dir, std::move(env), std::move(holder),
                                std::move(filesystem));
}

FakeNodeFilesystem& FakeNodeFilesystem::Of(Node& node) {
  return dynamic_cast<FakeNodeFilesystem&>(node.filesystem());
}

void FakeNodeFilesystem::NamespaceStopped() {
  up_ = false;
  mounts_.clear();
}

std::string FakeNodeFilesystem::Normal(const std::string& path) const {
  std::string clean = std::filesystem::path(path).lexically_normal().string();
  if (clean.size() > 1 && clean.back() == '/') clean.pop_back();
  return clean;
}

const FakeNodeFilesystem::FakeMount* FakeNodeFilesystem::MountOver(const std::string& path) const {
  const FakeMount* best = nullptr;
  for (const auto& m : mounts_) {  // later mounts stack over earlier ones
    const std::string& t = m.entry.target;
    bool holds = path == t || (path.size() > t.size() && path.compare(0, t.size(), t) == 0 &&
                               (t == "/" || path[t.size()] == '/'));
    if (holds && (best == nullptr || t.size() >= best->entry.target.size())) best = &m;
  }
  return best;
}

std::string FakeNodeFilesystem::Storage(const std::string& path) const {
  const std::string clean = Normal(path);
  const FakeMount* m = MountOver(clean);
  if (m == nullptr) return clean;
  return m->storage + clean.substr(m->entry.target.size());
}

void FakeNodeFilesystem::Fail(const std::string& what, int code) const {
  throw FilesystemError(what + " (in-memory node): " + std::strerror(code), code);
}

void FakeNodeFilesystem::CheckUp(const std::string& what, const std::string& path) const {
  if (!up_) Fail(what + " " + path + ": node is down;", ENXIO);
}

void FakeNodeFilesystem::Injected(const std::string& operation, const std::string& path) {
  auto it = injected_.find({operation, Normal(path)});
  if (it == injected_.end()) return;
  int code = it->second.first;
  if (--it->second.second <= 0) injected_.erase(it);
  Fail(operation + " " + path + " (injected)", code);
}

void FakeNodeFilesystem::InjectError(const std::string& operation, const std::string& path,
                                     int code, int times) {
  injected_[{operation, Normal(path)}] = {code, times};
}

void FakeNodeFilesystem::CheckWritable(const std::string& what, const std::string& path) const {
  const FakeMount* m = MountOver(Normal(path));
  if (m != nullptr && m->read_only) Fail(what + " " + path, EROFS);
}

void FakeNodeFilesystem::Mount(const std::string& source, const std::string& target,
                               const std::string& fs_type, unsigned long flags,
                               const std::string& data) {
  CheckUp("mount " + source + " on", target);
  operations_.push_back("mount " + source + " " + Normal(target));
  Injected("mount", target);
  const std::string clean = Normal(target);
  if (flags & MS_REMOUNT) {
    for (auto it = mounts_.rbegin(); it != mounts_.rend(); ++it) {
      if (it->entry.target != clean) continue;
      it->read_only = (flags & MS_RDONLY) != 0;
      it->entry.options = it->read_only ? "ro" : "rw";
      return;
    }
    Fail("remount " + target, EINVAL);
  }
  if (!PathExists(target)) Fail("mount " + source + " on " + target, ENOENT);
  FakeMount m;
  m.entry.target = clean;
  m.read_only = (flags & MS_RDONLY) != 0;
  m.entry.options = m.read_only ? "ro" : "rw";
  if (!data.empty()) m.entry.options += "," + data;
  if (flags & MS_BIND) {
    if (!PathExists(source)) Fail("bind mount " + source + " on " + target, ENOENT);
    const FakeMount* under = MountOver(Normal(source));
    m.entry.source = under ? under->entry.source : Normal(source);
    m.entry.fs_type = under ? under->entry.fs_type : "none";
    m.entry.root = under ? Normal(source).substr(under->entry.target.size()) : Normal(source);
    if (m.entry.root.empty()) m.entry.root = "/";
    m.storage = Storage(source);
  } else {
    m.entry.source = source;
    m.entry.fs_type = fs_type;
    // A tmpfs is new and empty on every mount; a device keeps its files.
    m.storage =
        fs_type == "tmpfs" ? "tmpfs#" + std::to_string(++tmpfs_mounts_) : "device:" + source;
    entries_.try_emplace(m.storage);  // the device's root directory
  }
  mounts_.push_back(m);
}

void FakeNodeFilesystem::Unmount(const std::string& target) {
  CheckUp("unmount", target);
  operations_.push_back("unmount " + Normal(target));
  Injected("unmount", target);
  const std::string clean = Normal(target);
  for (auto it = mounts_.rbegin(); it != mounts_.rend(); ++it) {
    if (it->entry.target == clean) {
      mounts_.erase(std::next(it).base());
      return;
    }
  }
  Fail("unmount " + target, EINVAL);
}

bool FakeNodeFilesystem::IsMountPoint(const std::string& path) {
  CheckUp("stat", path);
  const std::string clean = Normal(path);
  for (const auto& m : mounts_) {
    if (m.entry.target == clean) return true;
  }
  return false;
}

std::vector<MountEntry> FakeNodeFilesystem::Mounts() {
  std::vector<MountEntry> table;
  for (const auto& m : mounts_) table.push_back(m.entry);
  return table;
}

bool FakeNodeFilesystem::PathExists(const std::string& path) {
  CheckUp("stat", path);
  const std::string s = Storage(path);
  return s == "/" || entries_.count(s) != 0;
}

void FakeNodeFilesystem::MakeDirs(const std::string& path, unsigned mode) {
  CheckUp("mkdir -p", path);
  operations_.push_back("mkdir " + Normal(path));
  Injected("mkdir", path);
  std::filesystem::path sofar;
  for (const auto& part : std::filesystem::path(Normal(path))) {
    sofar /= part;
    const std::string s = Storage(sofar.string());
    if (s == "/") continue;
    auto [it, added] = entries_.try_emplace(s);
    if (added) {
      CheckWritable("mkdir -p", path);
      it->second.mode = mode;
    } else if (!it->second.directory) {
      Fail("mkdir -p " + path, ENOTDIR);
    }
  }
}

void FakeNodeFilesystem::RemoveDir(const std::string& path) {
  CheckUp("rmdir", path);
  operations_.push_back("rmdir " + Normal(path));
  Injected("rmdir", path);
  if (IsMountPoint(path)) Fail("rmdir " + path, EBUSY);
  const std::string s = Storage(path);
  auto it = entries_.find(s);
  if (it == entries_.end()) Fail("rmdir " + path, ENOENT);
  if (!it->second.directory) {
    CheckWritable("rmdir", path);
    entries_.erase(it);
    return;
  }
  auto child = entries_.lower_bound(s + "/");
  if (child != entries_.end() && child->first.compare(0, s.size() + 1, s + "/") == 0)
    Fail("rmdir " + path, ENOTEMPTY);
  CheckWritable("rmdir", path);
  entries_.erase(it);
}

std::vector<std::string> FakeNodeFilesystem::ListDir(const std::string& path) {
  CheckUp("list", path);
  std::vector<std::string> names;
  std::string prefix = Storage(path);
  if (prefix != "/") prefix += "/";
  for (auto it = entries_.lower_bound(prefix);
       it != entries_.end() && it->first.compare(0, prefix.size(), prefix) == 0; ++it) {
    std::string rest = it->first.substr(prefix.size());
    if (!rest.empty() && rest.find('/') == std::string::npos) names.push_back(rest);
  }
  return names;
}

void FakeNodeFilesystem::FormatAndMount(const std::string& device, const std::string& target,
                                        const std::string& fs_type, bool read_only) {
  CheckUp("format and mount " + device + " on", target);
  auto existing = formatted_.find(device);
  if (existing == formatted_.end()) {
    const std::string type = fs_type.empty() ? "ext4" : fs_type;
    operations_.push_back("format " + device + " " + type);
    Injected("format", device);
    existing = formatted_.emplace(device, type).first;
  }
  Mount(device, target, existing->second, read_only ? MS_RDONLY : 0, "");
}

void FakeNodeFilesystem::ResizeFs(const std::string& device, const std::string& mount_path) {
  CheckUp("resize " + device + " at", mount_path);
  operations_.push_back("resize " + device + " " + Normal(mount_path));
  Injected("resize", device);
  if (formatted_.count(device) == 0) Fail("resize " + device + ": no filesystem", EINVAL);
}

void FakeNodeFilesystem::SetVolumeOwnership(const std::string& dir, long gid) {
  CheckUp("chown", dir);
  const std::string s = Storage(dir);
  if (entries_.count(s) == 0) Fail("chown :" + std::to_string(gid) + " " + dir, ENOENT);
  for (auto it = entries_.lower_bound(s);
       it != entries_.end() && it->first.compare(0, s.size(), s) == 0; ++it) {
    if (it->first.size() == s.size() || it->first[s.size()] == '/') it->second.gid = gid;
  }
}

long FakeNodeFilesystem::GroupOf(const std::string& path) {
  CheckUp("stat", path);
  auto it = entries_.find(Storage(path));
  if (it == entries_.end()) Fail("stat " + path, ENOENT);
  return it->second.gid;
}

void FakeNodeFilesystem::WriteFile(const std::string& path, const std::string& content) {
  CheckUp("write", path);
  const std::string s = Storage(path);
  const std::string parent = Storage(std::filesystem::path(Normal(path)).parent_path().string());
  if (parent != "/" && entries_.count(parent) == 0) Fail("write " + path, ENOENT);
  auto it = entries_.find(s);
  if (it != entries_.end() && it->second.directory) Fail("write " + path, EISDIR);
  CheckWritable("write", path);
  Entry& e = entries_[s];
  e.directory = false;
  e.content = content;
  e.mode = 0644;
}

std::string FakeNodeFilesystem::ReadFile(const std::string& path) {
  CheckUp("read", path);
  auto it = entries_.find(Storage(path));
  if (it == entries_.end()) Fail("read " + path, ENOENT);
  if (it->second.directory) Fail("read " + path, EISDIR);
  return it->second.content;
}

}  // namespace flexkit::sim
