#pragma once
// A unix-socket server for client tests that answers each connection with
// scripted bytes: a good reply, garbage, silence, or a late reply. It records
// every request it read.
#include <atomic>
#include <chrono>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace convoy_flexvolume::testing {

class ScriptedServer {
 public:
  struct Reply {
    std::string bytes;                   // written as-is
    std::chrono::milliseconds delay{0};  // before writing
    bool close_without_reply = false;
  };

  // Listens on `socket_path`; replies are used in order, the last repeats.
  ScriptedServer(std::string socket_path, std::vector<Reply> replies);
  ~ScriptedServer();

  std::vector<std::string> Requests() const;
  const std::string& path() const { return path_; }

  // An HTTP response with Convoy's headers.
  static std::string Http(int status, const std::string& reason, const std::string& body);

 private:
  void Serve();
  std::string path_;
  std::vector<Reply> replies_;
  int listen_fd_ = -1;
  std::atomic<bool> stopping_{false};
  mutable std::mutex mu_;
  std::vector<std::string> requests_;
  std::thread thread_;
};

}  // namespace convoy_flexvolume::testing
