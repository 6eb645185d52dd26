#include "simulator/prober.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>

#include "simulator/plugin_name.h"

namespace flexkit::sim {
namespace {

// fsnotify's set of watched events.
constexpr uint32_t kWatchMask = IN_MOVED_TO | IN_MOVED_FROM | IN_CREATE | IN_ATTRIB | IN_MODIFY |
                                IN_MOVE_SELF | IN_DELETE | IN_DELETE_SELF;

bool IsDirectory(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

}  // namespace

Prober::Prober(Node& node, std::string plugin_dir, std::string component, DriverInvoker& invoker,
               const VersionProfile& profile)
    : node_(node),
      plugin_dir_(std::move(plugin_dir)),
      component_(std::move(component)),
      invoker_(invoker),
      profile_(profile) {
  std::filesystem::create_directories(plugin_dir_);  // Init(): MkdirAll(dir, 0755)
  inotify_fd_ = ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  if (inotify_fd_ < 0) {
    throw std::runtime_error("watch plugin dir " + plugin_dir_ +
                             ": inotify_init1: " + std::strerror(errno));
  }
  AddWatches(plugin_dir_);
}

Prober::~Prober() {
  if (inotify_fd_ >= 0) ::close(inotify_fd_);
}

void Prober::AddWatches(const std::string& dir) {
  if (!IsDirectory(dir)) return;
  int wd = ::inotify_add_watch(inotify_fd_, dir.c_str(), kWatchMask);
  if (wd >= 0) watches_[wd] = dir;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    // Symlinked directories are watched, their subdirectories are not.
    if (entry.is_directory() && !entry.is_symlink()) AddWatches(entry.path().string());
    if (entry.is_symlink() && entry.is_directory()) {
      int lwd = ::inotify_add_watch(inotify_fd_, entry.path().c_str(), kWatchMask);
      if (lwd >= 0) watches_[lwd] = entry.path().string();
    }
  }
}

// handleWatchEvent for every queued inotify event.
void Prober::DrainEvents() {
  alignas(inotify_event) char buffer[16384];
  for (;;) {
    ssize_t n = ::read(inotify_fd_, buffer, sizeof buffer);
    if (n <= 0) return;
    for (char* p = buffer; p < buffer + n;) {
      auto* ev = reinterpret_cast<inotify_event*>(p);
      p += sizeof(inotify_event) + ev->len;
      auto it = watches_.find(ev->wd);
      if (it == watches_.end()) continue;
      std::string dir = it->second;
      if (ev->mask & IN_IGNORED) {
        watches_.erase(it);
        continue;
      }
      std::string path = ev->len > 0 ? dir + "/" + ev->name : dir;
      std::string base = std::filesystem::path(path).filename().string();
      if (!base.empty() && base[0] == '.') continue;
      if (path == plugin_dir_) {
        if (ev->mask & IN_DELETE_SELF) {  // recreate and re-watch
          std::filesystem::create_directories(plugin_dir_);
          AddWatches(plugin_dir_);
        }
        continue;
      }
      if (ev->mask & (IN_CREATE | IN_MOVED_TO)) AddWatches(path);
      if (!probed_all_) continue;
      std::string rel = std::filesystem::path(path).lexically_relative(plugin_dir_).string();
      if (rel.empty() || rel.rfind("..", 0) == 0) continue;
      std::string dir_name = rel.substr(0, rel.find('/'));
      std::string exe_rel = dir_name + "/" + ExecutableName(UnescapeDriverName(dir_name));
      bool removed =
          (ev->mask & (IN_DELETE | IN_DELETE_SELF)) != 0 && (rel == exe_rel || dir == plugin_dir_);
      pending_[dir_name] = !removed;
    }
  }
}

void Prober::InitDriver(const std::string& dir_name, bool remember_failure) {
  auto fail = [&](const std::string& why) {
    if (remember_failure) pending_[dir_name] = true;  // retried on the next probe
    throw std::runtime_error("Error creating Flexvolume plugin from directory " + dir_name +
                             ", skipping: " + why);
  };
  auto plugin = std::make_shared<FlexPlugin>();
  plugin->driver_name = UnescapeDriverName(dir_name);
  plugin->executable = plugin_dir_ + "/" + dir_name + "/" + ExecutableName(plugin->driver_name);
  CallResult init = invoker_.Call(node_, component_, plugin->executable,
                                  ArgvBuilder(profile_).Init(), Redactor());
  if (!init.ok()) fail(init.verdict.error);
  if (profile_.honours_capabilities) {
    if (!init.verdict.status->capabilities) {
      fail("\"capabilities\": null (kubelet dereferences the nil pointer and panics)");
    }
    plugin->capabilities = *init.verdict.status->capabilities;
  } else {
    plugin->capabilities = DriverCapabilities::Defaults();  // every driver attachable
  }
  std::string plugin_name = profile_.plugin_name_prefix + plugin->driver_name;
  if (auto why = QualifiedNameError(plugin_name); !why.empty()) {
    // initProbedPlugin refuses it; the probe itself succeeded, so no retry.
    throw std::runtime_error("volume plugin " + plugin_name + " has invalid name: " + why);
  }
  plugins_[plugin->driver_name] = plugin;
}

std::vector<std::string> Prober::Probe() {
  std::vector<std::string> errors;
  DrainEvents();
  if (!probed_all_) {
    probed_all_ = true;
    pending_.clear();
    std::error_code ec;
    std::vector<std::string> dirs;
    for (const auto& entry : std::filesystem::directory_iterator(plugin_dir_, ec)) {
      std::string name = entry.path().filename().string();
      if (name[0] != '.' && entry.is_directory()) dirs.push_back(name);
    }
    for (const auto& d : dirs) {
      try {
        InitDriver(d, /*remember_failure=*/false);
      } catch (const std::exception& e) {
        errors.push_back(e.what());
      }
    }
    return errors;
  }
  auto work = pending_;
  for (const auto& [dir_name, add] : work) {
    pending_.erase(dir_name);
    if (!add) {
      plugins_.erase(UnescapeDriverName(dir_name));
      continue;
    }
    try {
      InitDriver(dir_name, /*remember_failure=*/true);
    } catch (const std::exception& e) {
      errors.push_back(e.what());
    }
  }
  return errors;
}

std::shared_ptr<FlexPlugin> Prober::Find(const std::string& driver_name) {
  Probe();
  auto it = plugins_.find(driver_name);
  return it == plugins_.end() ? nullptr : it->second;
}

std::vector<std::string> Prober::PluginNames() const {
  std::vector<std::string> names;
  for (const auto& [name, plugin] : plugins_) names.push_back(name);
  return names;
}

CallResult Prober::Call(FlexPlugin& plugin, const Args& args, const Redactor& redactor) {
  const std::string& verb = args.at(0);
  if (plugin.unsupported.count(verb) != 0) {
    invoker_.RecordCached(node_, component_, plugin.executable, args, redactor);
    CallResult cached;
    cached.verdict.outcome = Outcome::kNotSupported;
    cached.verdict.error = "Not supported";
    return cached;
  }
  CallResult result = invoker_.Call(node_, component_, plugin.executable, args, redactor);
  if (result.not_supported()) plugin.unsupported.insert(verb);
  return result;
}

CallResult ProberCaller::Call(const DriverCall& call) {
  auto plugin = prober_.Find(call.driver);
  if (!plugin) {
    CallResult none;
    none.verdict.outcome = Outcome::kFailure;
    none.verdict.error = "no volume plugin matched " + call.driver;
    return none;
  }
  return prober_.Call(*plugin, call.args, call.redactor);
}

}  // namespace flexkit::sim
