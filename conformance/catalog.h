#pragma once
// The catalog: named, tagged cases, each a verb sequence through the
// simulator (csi-sanity style: one file per group, catalog_<group>.cc).
// `applies` decides SKIP before anything starts; a case may still SKIP
// from inside (CaseContext::Skip) once it knows more.
#include <cstdint>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "conformance/case_context.h"

namespace flexkit::conform {

struct Case {
  std::string name;  // "group/what-it-checks"
  // "protocol", "lifecycle", ..., "root"; "slow": waits out timeouts or runs
  // many steps (a parallel run starts it first)
  std::vector<std::string> tags;
  std::vector<std::string> failure_modes;  // "F9", ... (anchors §6)
  // Empty when the case applies to the profile; otherwise the SKIP reason.
  std::function<std::string(const DriverProfile&)> applies;
  std::function<void(CaseContext&)> run;
  // The nodes it runs on, as many as the profile has up to this: a node no
  // call reaches would still cost its namespace, dirs and leak audit.
  int nodes = 1;
};

// flexconform's --depth, --random and --seed: what the [sequence] cases run.
struct SequenceOptions {
  int depth = 4;           // sequence/exhaustive: every call in every state closer than this
  int random_walks = 10;   // sequence/random: this many walks...
  int walk_length = 12;    // ...of this many steps (exhaustive's walks too)
  std::uint64_t seed = 1;  // walk i uses seed + i
  // How this run was started, selection left out ("flexconform --driver
  // D"): a failure's replay line starts with it.
  std::string command = "flexconform";
};
struct CatalogOptions {
  SequenceOptions sequence;
};

std::vector<Case> Catalog(const CatalogOptions& options = {});

// Tag "live-node": cases safe on a real cluster node, against the driver
// installed there and its real backend (the Sonobuoy plugin, deploy/).
extern const char* const kLiveNodeTag;
// The names Catalog() tags with it.
const std::set<std::string>& LiveNodeCases();
// A profile with liveNode: every case in `cases` without the tag SKIPs,
// saying why (through profile.skip; a reason already there stays).
void SkipCasesUnsafeOnALiveNode(DriverProfile& profile, const std::vector<const Case*>& cases);

// Each F1-F30 with the cases covering it, or why none does.
struct Coverage {
  std::string failure_mode;  // "F14"
  std::string title;
  std::string note;  // the covering cases and/or how it is checked or why not
};
std::vector<Coverage> CoverageTable();

// Group registrations, one per catalog_<group>.cc.
void AddProtocolCases(std::vector<Case>& cases);
void AddLifecycleCases(std::vector<Case>& cases);
void AddIdempotencyCases(std::vector<Case>& cases);
void AddTeardownCases(std::vector<Case>& cases);
void AddReadOnlyCases(std::vector<Case>& cases);
void AddFsTypeCases(std::vector<Case>& cases);
void AddSecretsCases(std::vector<Case>& cases);
void AddRobustnessCases(std::vector<Case>& cases);
void AddInstallCases(std::vector<Case>& cases);
void AddDriftCases(std::vector<Case>& cases);
void AddFaultCases(std::vector<Case>& cases);
void AddFailurePathCases(std::vector<Case>& cases);
void AddFailoverCases(std::vector<Case>& cases);
void AddSequenceCases(std::vector<Case>& cases, const SequenceOptions& options);
void AddResizeCases(std::vector<Case>& cases);
void AddRestartCases(std::vector<Case>& cases);
void AddMetricsCases(std::vector<Case>& cases);

// Writes a file through the pod directory and reads it back (the volume
// is usable); FAIL otherwise.
void CheckDataRoundTrip(CaseContext& c, const PodVolume& v,
                        const std::string& file = "flexconform.txt");
// Reads back a file CheckDataRoundTrip wrote earlier, after `when` (a
// resize, a kubelet restart): FAIL under `rule` when it is gone or differs.
void CheckDataKept(CaseContext& c, const PodVolume& v, const std::string& file,
                   const std::string& when, const std::string& rule);
// Tries a write into `dir`, where read-only was asked: true when it goes
// through (recorded as a failed check, and the file removed again).
bool WriteGoesThrough(CaseContext& c, sim::Node& n, const std::string& dir);
// User files in a directory that is not mounted (a pod wrote into its
// volume dir while nothing was mounted, or a crashed node left them):
// index.html, a dotfile, a subdirectory with a file.
struct PlantedFiles {
  sim::Node* node = nullptr;
  std::string dir;
  std::vector<std::pair<std::string, std::string>> files;  // path, content
  // A pod dir of a podVolume: directory driver: the files are the volume's
  // own, which its unmount removes; no data is lost then.
  bool volume_content = false;
};
// Plants them in `dir` (created if missing); the tracker removes what is
// left when the case ends early.
PlantedFiles PlantUserFiles(CaseContext& c, sim::Node& n, const std::string& dir);
// After the teardown call `verb` on the planted dir: every file must be
// there unchanged (rule "data loss"; an empty directory may go, files never).
// Removes them, so kubelet's rmdir can follow.
void CheckPlantedFiles(CaseContext& c, const PlantedFiles& planted, const std::string& verb);
extern const char* const kDataLossRule;

// CaseContext::SetUp, where a well-formed Failure of a driver call is an
// accepted answer (the backend has no share of that name; the driver does
// not support that fsType): nullopt then, noted in the transcript as
// refusing `what`. Every other problem still FAILs.
std::optional<PodVolume> SetUpOrRefused(CaseContext& c, sim::Node& n, const sim::VolumeSpec& spec,
                                        const sim::MountExtras& pod, const std::string& what);

// Runs what the tracker still holds (the case's teardown); FAIL on errors.
void TearDownAll(CaseContext& c);

// Where the driver's mount helpers are: the system's dirs and the
// driver's own folder (a mount.cifs it ships beside itself).
std::vector<std::string> MountHelperDirs(const CaseContext& c);

// Common `applies` predicates.
std::string Always(const DriverProfile&);
std::string AttachableOnly(const DriverProfile& p);
std::string MountOnly(const DriverProfile& p);
// The fixture can cut a node off its backend and back (partition, heal).
std::string Partitionable(const DriverProfile& p);

}  // namespace flexkit::conform
