#include "simulator/recording.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "platform/read_file.h"

namespace flexkit::sim {
namespace {

namespace fs = std::filesystem;

std::string DriverName(const std::string& driver_dir) {
  const auto tilde = driver_dir.rfind('~');
  return tilde == std::string::npos ? driver_dir : driver_dir.substr(tilde + 1);
}

[[noreturn]] void Throw(const std::string& what) {
  throw std::runtime_error(what + ": " + std::strerror(errno));
}

// Writes `content` to `path` through a dot-named temporary, fsynced and
// renamed, with `mode`.
void WriteAtomically(const std::string& path, const std::string& content, mode_t mode) {
  const std::string tmp = fs::path(path).parent_path().string() + "/.flexsim-record.tmp";
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
  if (fd < 0) Throw("create " + tmp);
  std::size_t done = 0;
  while (done < content.size()) {
    const ssize_t n = ::write(fd, content.data() + done, content.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      ::close(fd);
      ::unlink(tmp.c_str());
      Throw("write " + tmp);
    }
    done += static_cast<std::size_t>(n);
  }
  if (::fchmod(fd, mode) != 0 || ::fsync(fd) != 0) {
    ::close(fd);
    ::unlink(tmp.c_str());
    Throw("fsync " + tmp);
  }
  ::close(fd);
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    ::unlink(tmp.c_str());
    Throw("rename " + tmp + " to " + path);
  }
}

}  // namespace

void InstallRecorder(const RecordInstall& install) {
  if (install.driver_dir.empty() || install.driver_dir.find('/') != std::string::npos ||
      install.driver_dir[0] == '.')
    throw std::runtime_error("driver folder '" + install.driver_dir +
                             "': expected a folder name such as vendor~driver");
  const std::string dir = install.plugin_dir + "/" + install.driver_dir;
  const std::string name = DriverName(install.driver_dir);
  const std::string exe = dir + "/" + name;
  const std::string real = dir + "/." + name + ".real";
  const std::string config = dir + "/." + name + ".record";
  struct stat st {};
  if (::stat(exe.c_str(), &st) != 0) Throw("driver " + exe);
  if (!S_ISREG(st.st_mode) || (st.st_mode & 0111) == 0)
    throw std::runtime_error("driver " + exe + ": not an executable file");
  if (::access(real.c_str(), F_OK) == 0)
    throw std::runtime_error("the recorder is already installed for " + exe + " (" + real +
                             " exists): run flexsim record uninstall first");
  const std::string shim = platform::ReadWholeFile(install.shim);
  if (!install.log.empty() && install.log[0] != '/')
    throw std::runtime_error("log " + install.log + ": must be an absolute path");

  WriteAtomically(config, install.log.empty() ? "" : install.log + "\n", 0644);
  if (::link(exe.c_str(), real.c_str()) != 0) {
    const int e = errno;
    ::unlink(config.c_str());
    errno = e;
    Throw("link " + exe + " to " + real);
  }
  try {
    WriteAtomically(exe, shim, 0755);  // the rename replaces the driver in one step
  } catch (...) {
    ::unlink(real.c_str());
    ::unlink(config.c_str());
    throw;
  }
}

void UninstallRecorder(const std::string& plugin_dir, const std::string& driver_dir) {
  const std::string dir = plugin_dir + "/" + driver_dir;
  const std::string name = DriverName(driver_dir);
  const std::string exe = dir + "/" + name;
  const std::string real = dir + "/." + name + ".real";
  if (::access(real.c_str(), F_OK) != 0)
    throw std::runtime_error("the recorder is not installed for " + exe + " (no " + real + ")");
  if (::rename(real.c_str(), exe.c_str()) != 0) Throw("rename " + real + " to " + exe);
  ::unlink((dir + "/." + name + ".record").c_str());
}

std::string KubeletRootOf(const std::string& path) {
  const auto global = path.find("/plugins/kubernetes.io/flexvolume/");
  if (global != std::string::npos) return path.substr(0, global);
  const auto pods = path.rfind("/pods/");
  if (pods != std::string::npos && path.find("/volumes/", pods) != std::string::npos)
    return path.substr(0, pods);
  return "";
}

std::vector<RecordedCall> ReadRecording(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("read " + path + ": cannot open");
  std::vector<RecordedCall> calls;
  std::string text;
  int line = 0;
  while (std::getline(in, text)) {
    ++line;
    if (text.empty()) continue;
    const std::string where = path + ":" + std::to_string(line) + ": ";
    auto doc = nlohmann::json::parse(text, nullptr, false);
    if (!doc.is_object() || !doc.contains("argv") || !doc["argv"].is_array() ||
        !doc.contains("exit"))
      throw std::runtime_error(where + "not a flexsim-record-shim record");
    RecordedCall c;
    c.line = line;
    try {
      c.time = doc.value("time", "");
      c.args = doc["argv"].get<std::vector<std::string>>();
      c.verb = c.args.empty() ? "" : c.args.front();
      c.options = doc.value("options", nlohmann::json());
      c.exit_code = doc["exit"].value("code", 0);
      c.signal = doc["exit"].value("signal", 0);
      c.output = doc.value("output", "");
      c.duration_ms = doc.value("durationMs", 0.0);
    } catch (const nlohmann::json::exception&) {
      throw std::runtime_error(where + "a field of the record has the wrong type");
    }
    calls.push_back(std::move(c));
  }
  return calls;
}

}  // namespace flexkit::sim
