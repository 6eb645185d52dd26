#pragma once
// Times whole program runs the way kubelet pays for them: exec, read the
// combined stdout+stderr through one pipe, wait.
#include <string>
#include <vector>

namespace flexkit::bench {

// Wall time of one run in microseconds, or -1 if it could not start or did
// not exit 0 (its output is left in *output either way).
double TimeRun(const std::vector<std::string>& argv, std::string* output);

double Median(std::vector<double> samples);

// Runs each command `runs` times, interleaved so machine noise hits all
// alike, after one warm-up run each. Returns the medians, or an empty vector
// (with the failing command's output on stderr) if a run failed.
std::vector<double> InterleavedMedians(const std::vector<std::vector<std::string>>& commands,
                                       int runs);

}  // namespace flexkit::bench
