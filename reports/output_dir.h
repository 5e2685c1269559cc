// Where ratelab writes its files (a report, a run's result): never into `/` or a system
// directory, never over files it did not write unless told to, and never leaving its own stale
// files beside new ones. What ratelab wrote into a directory is listed in its manifest,
// DIR/.ratelab-files, one path relative to DIR per line.
#ifndef RATELAB_REPORTS_OUTPUT_DIR_H_
#define RATELAB_REPORTS_OUTPUT_DIR_H_

#include <set>
#include <span>
#include <string>
#include <utility>

#include "impl/core/status.h"

namespace ratelab {

inline constexpr char kManifestName[] = ".ratelab-files";

class OutputDir {
 public:
  // Checks that `dir` may take ratelab's files, touching nothing (so a command can check before
  // its work and write after): InvalidArgument when `dir` is `/` or a system directory (always),
  // a file, or holds files ratelab did not write (unless `force`, which keeps them beside).
  // Ratelab's own are those its manifest lists; for a directory written before manifests, the
  // files a report has (report.*, junit.xml, result.json, plots/*). `option` names the flag in
  // errors ("--out").
  static Result<OutputDir> Prepare(const std::string& dir, bool force, const std::string& option);

  // Creates the directory, or removes the files ratelab wrote there before, so no stale one
  // (an old plot) stays beside the new ones.
  Status Clear() const;
  // Lists in the manifest every file now under the directory but the ones Prepare kept.
  Status Record() const;
  // Writes `text` as the file `name` in the directory: its path, or Internal naming it.
  Result<std::string> Write(const std::string& name, const std::string& text) const;
  // Writes each (name, text) after Clear, then Record: the path of the first.
  Result<std::string> WriteAll(std::span<const std::pair<const char*, std::string>> files) const;

  const std::string& path() const { return dir_; }

 private:
  OutputDir(std::string dir, std::set<std::string> stale, std::set<std::string> kept)
      : dir_(std::move(dir)), stale_(std::move(stale)), kept_(std::move(kept)) {}

  std::string dir_;
  std::set<std::string> stale_;  // relative paths of ratelab's old files
  std::set<std::string> kept_;   // relative paths of files that are not ratelab's
};

}  // namespace ratelab

#endif  // RATELAB_REPORTS_OUTPUT_DIR_H_
