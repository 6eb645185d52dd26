#pragma once
// A ConvoyClient that forwards to one the test keeps: the driver owns what a
// ConvoyClientFactory returns, while a test's daemon (a mock, or a stateful
// fake) must outlive every client the driver made for it.
#include "driver/convoy/convoy_client.h"

namespace convoy_flexvolume {

class BorrowedClient final : public ConvoyClient {
 public:
  explicit BorrowedClient(ConvoyClient* target) : t_(target) {}
  std::string Endpoint() const override { return t_->Endpoint(); }
  VolumeInfo Create(const CreateRequest& r) override { return t_->Create(r); }
  std::optional<VolumeInfo> Inspect(const std::string& n) override { return t_->Inspect(n); }
  std::map<std::string, VolumeInfo> List() override { return t_->List(); }
  std::string Mount(const MountRequest& r) override { return t_->Mount(r); }
  void Umount(const std::string& n) override { t_->Umount(n); }
  bool Delete(const std::string& n, bool ref) override { return t_->Delete(n, ref); }
  ApiProbe ProbeApi() override { return t_->ProbeApi(); }
  std::string DaemonInstance() const override { return t_->DaemonInstance(); }

 private:
  ConvoyClient* t_;
};

}  // namespace convoy_flexvolume
