#include "conformance/helper_calls.h"

#include <sys/mount.h>
#include <sys/statvfs.h>

#include <algorithm>
#include <exception>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <system_error>

#include "platform/read_file.h"

namespace flexkit::conform {
namespace {

namespace fs = std::filesystem;

// mount(8) and every /sbin/mount.<type>: each file once by its real path
// (one file has several names on a merged /usr, and a helper may be a
// symlink to a program that reads the name it was called by), with the
// names it is called by.
std::map<std::string, std::set<std::string>> MountHelpers(const std::vector<std::string>& dirs) {
  std::map<std::string, std::set<std::string>> found;
  for (const auto& dir : dirs) {
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(dir, ec)) {
      const std::string name = e.path().filename().string();
      if (name != "mount" && name.rfind("mount.", 0) != 0) continue;
      const fs::path real = fs::weakly_canonical(e.path(), ec);
      if (!ec && fs::is_regular_file(real, ec)) found[real.string()].insert(name);
    }
  }
  return found;
}

std::string SingleQuoted(const std::string& s) {
  std::string out = "'";
  for (char ch : s) out += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
  return out + "'";
}

// Shell builtins only: the driver may run the helper with an empty PATH.
// `real_dir` holds the real helper under each name it is called by.
std::string WrapperScript(const std::string& calls_dir, const std::string& real_dir) {
  const std::string call = SingleQuoted(calls_dir + "/") + "$$";
  const std::string dir = SingleQuoted(real_dir + "/");
  return "#!/bin/sh\n"
         "# flexconform: records this call (argv, exported environment), then runs the helper\n"
         "printf '%s\\0' \"$0\" \"$@\" >" +
         call + ".argv 2>/dev/null\n" + "export -p >" + call + ".env 2>/dev/null\n" +
         "name=${0##*/}\n[ -e " + dir + "\"$name\" ] || name=.real\n" + "exec " + dir +
         "\"$name\" \"$@\"\n";
}

// mount(8)'s options that take an argument: what follows one is its.
bool TakesArgument(const std::string& arg) {
  static const std::set<std::string> with_argument = {
      "-o",      "-t",          "-O",       "-L",       "-U",      "--options",
      "--types", "--test-opts", "--source", "--target", "--label", "--uuid"};
  return with_argument.count(arg) > 0;
}

std::vector<std::string> SplitAtNul(const std::string& text) {
  std::vector<std::string> parts;
  std::size_t from = 0;
  for (std::size_t at = text.find('\0'); at != std::string::npos; at = text.find('\0', from)) {
    parts.push_back(text.substr(from, at - from));
    from = at + 1;
  }
  return parts;
}

}  // namespace

HelperRecorder::HelperRecorder(sim::Node& node, const std::string& case_dir,
                               const std::vector<std::string>& helper_dirs)
    : node_(node), dir_(case_dir + "/helper-calls/" + node.name()) {
  struct statvfs vfs {};
  if (::statvfs(case_dir.c_str(), &vfs) == 0 && (vfs.f_flag & ST_NOEXEC)) {
    skipped_ = "the case dir is on a noexec mount, where no wrapper can run";
    return;
  }
  const auto helpers = MountHelpers(helper_dirs);
  if (helpers.empty()) {
    skipped_ = "no mount(8) or mount.<type> on this machine";
    return;
  }
  fs::create_directories(dir_ + "/calls");
  std::size_t i = 0;
  for (const auto& [helper, names] : helpers) {
    const std::string real_dir = dir_ + "/real/" + std::to_string(i);
    fs::create_directories(real_dir);
    std::ofstream(real_dir + "/.real").flush();  // a file to bind the helper onto
    for (const auto& name : names) fs::create_symlink(".real", real_dir + "/" + name);
    const std::string wrapper = dir_ + "/wrapper-" + std::to_string(i++);
    std::ofstream(wrapper) << WrapperScript(dir_ + "/calls", real_dir);
    fs::permissions(wrapper, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                                 fs::perms::others_read | fs::perms::others_exec);
    try {
      node_.filesystem().Mount(helper, real_dir + "/.real", "", MS_BIND, "");
      binds_.push_back(real_dir + "/.real");
      node_.filesystem().Mount(wrapper, helper, "", MS_BIND, "");
      binds_.push_back(helper);
    } catch (const std::exception& e) {
      skipped_ = std::string("binding a recorder over ") + helper + ": " + e.what();
      break;
    }
  }
}

HelperRecorder::~HelperRecorder() {
  bool unbound = true;
  // A crashed node's namespace went, and its binds with it.
  for (auto it = binds_.rbegin(); node_.running() && it != binds_.rend(); ++it) {
    try {
      node_.filesystem().Unmount(*it);
    } catch (const std::exception&) {
      unbound = false;  // still busy (a helper that has not exited): the node audit names it
    }
  }
  // The records hold what the helpers got, secrets among them: gone with
  // the recorder, even from a case dir kept with --keep.
  std::error_code ec;
  fs::remove_all(dir_ + "/calls", ec);
  if (unbound) fs::remove_all(dir_, ec);
}

std::vector<HelperCall> HelperRecorder::Calls() const {
  std::vector<HelperCall> calls;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir_ + "/calls", ec)) {
    if (e.path().extension() != ".argv") continue;
    HelperCall call;
    try {
      call.argv = SplitAtNul(platform::ReadWholeFile(e.path().string()));
      fs::path env = e.path();
      call.environment = platform::ReadWholeFile(env.replace_extension(".env").string());
    } catch (const std::system_error&) {
      // A call still writing its record: its argv is complete or absent.
    }
    if (!call.argv.empty()) calls.push_back(std::move(call));
  }
  return calls;
}

void HelperRecorder::Clear() {
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir_ + "/calls", ec)) fs::remove(e.path(), ec);
}

std::vector<std::string> MountOptionStrings(const HelperCall& call) {
  std::vector<std::string> out;
  const auto& a = call.argv;
  for (std::size_t i = 1; i < a.size() && a[i] != "--"; ++i) {
    if ((a[i] == "-o" || a[i] == "--options") && i + 1 < a.size()) {
      out.push_back(a[++i]);
    } else if (TakesArgument(a[i])) {
      ++i;
    } else if (a[i].rfind("--options=", 0) == 0) {
      out.push_back(a[i].substr(10));
    } else if (a[i].size() > 2 && a[i].rfind("-o", 0) == 0) {
      out.push_back(a[i].substr(2));
    }
  }
  return out;
}

std::vector<std::string> SplitMountOptions(const std::string& options) {
  std::vector<std::string> parts;
  std::string current;
  bool quoted = false;
  for (std::size_t i = 0; i < options.size(); ++i) {
    const char ch = options[i];
    if (ch == '"') quoted = !quoted;
    if (ch == ',' && !quoted) {
      if (i + 1 < options.size() && options[i + 1] == ',') {
        current += ",,";
        ++i;
        continue;
      }
      parts.push_back(current);
      current.clear();
      continue;
    }
    current += ch;
  }
  parts.push_back(current);
  return parts;
}

std::string ValueAsOptions(const std::vector<HelperCall>& calls, const std::string& value) {
  // mount(8)'s options that take an argument: what follows them is theirs.
  static const std::set<std::string> takes_argument = {
      "-o",      "-t",          "-O",       "-L",       "-U",      "--options",
      "--types", "--test-opts", "--source", "--target", "--label", "--uuid"};
  for (const auto& call : calls) {
    const std::string helper = fs::path(call.argv.front()).filename().string();
    for (std::size_t i = 1; i < call.argv.size() && call.argv[i] != "--"; ++i) {
      if (!value.empty() && value.front() == '-' && call.argv[i] == value &&
          !TakesArgument(call.argv[i - 1]))
        return "reached " + helper +
               " as an argument of its own before any '--', where its leading '-' makes it an "
               "option: put '--' before the operands, or refuse it";
    }
  }
  const auto pieces = SplitMountOptions(value);
  if (pieces.size() < 2) return "";
  auto ends_with = [](const std::string& s, const std::string& tail) {
    return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
  };
  for (const auto& call : calls) {
    for (const auto& options : MountOptionStrings(call)) {
      const auto got = SplitMountOptions(options);
      for (std::size_t i = 1; i < got.size(); ++i) {
        for (std::size_t p = 1; p < pieces.size(); ++p) {
          if (!pieces[p].empty() && got[i] == pieces[p] && ends_with(got[i - 1], pieces[p - 1]))
            return "reached " + fs::path(call.argv.front()).filename().string() +
                   " split at its commas into mount options of their own: escape or quote it, "
                   "pass it in a credentials file or the helper's environment, or refuse it";
        }
      }
    }
  }
  return "";
}

}  // namespace flexkit::conform
