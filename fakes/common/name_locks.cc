#include "fakes/common/name_locks.h"

namespace flexkit::fakes {

NameLocks::Guard::Guard(NameLocks& table, std::string name)
    : table_(table), name_(std::move(name)) {
  std::unique_lock lock(table_.mutex_);
  Entry& e = table_.entries_[name_];
  ++e.waiters;
  table_.released_.wait(lock, [&] { return !e.held; });
  --e.waiters;
  e.held = true;
}

NameLocks::Guard::~Guard() {
  std::lock_guard lock(table_.mutex_);
  auto it = table_.entries_.find(name_);
  it->second.held = false;
  if (it->second.waiters == 0) table_.entries_.erase(it);
  table_.released_.notify_all();
}

}  // namespace flexkit::fakes
