#pragma once
// Per-volume serialisation: operations on one name run one at a time, while
// operations on different names (and their slow work: mkfs, attach waits)
// run in parallel. The table's own mutex is held only to find the entry.
#include <condition_variable>
#include <map>
#include <mutex>
#include <string>

namespace flexkit::fakes {

class NameLocks {
 public:
  class Guard {
   public:
    Guard(NameLocks& table, std::string name);
    ~Guard();
    Guard(const Guard&) = delete;
    Guard& operator=(const Guard&) = delete;

   private:
    NameLocks& table_;
    std::string name_;
  };

 private:
  struct Entry {
    bool held = false;
    int waiters = 0;
  };
  std::mutex mutex_;
  std::condition_variable released_;
  std::map<std::string, Entry> entries_;
};

}  // namespace flexkit::fakes
