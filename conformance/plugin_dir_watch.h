#pragma once
// Watches a driver's own plugin folder the way kubelet's prober does
// (protocol §1.3, probe.go handleWatchEvent): inotify on the folder and
// every directory below it, and any create, write, chmod, remove or rename
// of an entry whose name does not start with '.' makes kubelet re-run the
// driver's init and drop its Not-supported cache. A driver that writes a
// log or state file there on every call re-probes itself on every call
// (kubernetes#58352).
#include <string>
#include <vector>

namespace flexkit::conform {

class PluginDirWatch {
 public:
  // Starts watching `folder` and its subdirectories; a folder that cannot
  // be watched (missing, no inotify) yields no changes and says why in
  // error().
  // `unwatched`: a directory below `folder` left out with all it holds.
  explicit PluginDirWatch(const std::string& folder, const std::string& unwatched = "");
  ~PluginDirWatch();
  PluginDirWatch(const PluginDirWatch&) = delete;
  PluginDirWatch& operator=(const PluginDirWatch&) = delete;

  // What happened since the watch started (or the last call), as
  // "PATH (EVENT)" for each change kubelet's prober would react to.
  std::vector<std::string> Changes();
  const std::string& error() const { return error_; }

 private:
  void AddRecursive(const std::string& dir);
  int fd_ = -1;
  std::vector<std::pair<int, std::string>> watches_;  // watch descriptor -> directory
  std::string unwatched_;
  std::string error_;
};

}  // namespace flexkit::conform
