#include "reports/output_dir.h"

#include <array>
#include <filesystem>
#include <fstream>
#include <string_view>
#include <utility>
#include <vector>

namespace ratelab {

namespace {

namespace fs = std::filesystem;

// Directories ratelab never writes into: the root and the system's own, themselves (`exact`) or
// anywhere under them.
struct Forbidden {
  std::string_view path;
  bool exact;
};
constexpr std::array<Forbidden, 19> kForbidden = {{
    {"/", true},     {"/bin", false},   {"/boot", false},  {"/dev", false},  {"/etc", false},
    {"/lib", false}, {"/lib32", false}, {"/lib64", false}, {"/proc", false}, {"/sbin", false},
    {"/sys", false}, {"/usr", false},   {"/home", true},   {"/opt", true},   {"/root", true},
    {"/run", true},  {"/srv", true},    {"/tmp", true},    {"/var", true},
}};

bool IsForbidden(const fs::path& canonical) {
  const std::string p = canonical.string();
  for (const Forbidden& f : kForbidden) {
    if (p == f.path) return true;
    if (!f.exact && p.starts_with(std::string(f.path) + "/")) return true;
  }
  return false;
}

// Every file under `dir`, relative to it, the manifest aside: a symbolic link as a file of its
// own (never followed, whatever it names).
std::vector<std::string> FilesUnder(const fs::path& dir, std::error_code& ec) {
  std::vector<std::string> out;
  for (auto it = fs::recursive_directory_iterator(dir, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (!it->is_symlink(ec) && it->is_directory(ec)) continue;
    const std::string rel = it->path().lexically_relative(dir).generic_string();
    if (rel != kManifestName) out.push_back(rel);
  }
  return out;
}

std::set<std::string> ReadManifest(const fs::path& dir) {
  std::set<std::string> out;
  std::ifstream in(dir / kManifestName);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) out.insert(line);
  }
  return out;
}

// A file a report or a result has, for a directory written before manifests.
bool LooksLikeOurs(const std::string& rel) {
  static constexpr std::array<std::string_view, 5> kNames = {
      "report.json", "report.html", "report.md", "junit.xml", "result.json"};
  for (std::string_view n : kNames) {
    if (rel == n) return true;
  }
  return rel.starts_with("plots/") && rel.find('/', 6) == std::string::npos;
}

}  // namespace

Result<OutputDir> OutputDir::Prepare(const std::string& dir, bool force,
                                     const std::string& option) {
  std::error_code ec;
  const fs::path path = fs::weakly_canonical(fs::absolute(dir, ec), ec);
  if (ec) return absl::InvalidArgumentError(option + ": cannot use '" + dir + "': " + ec.message());
  if (IsForbidden(path)) {
    return absl::InvalidArgumentError(option + ": '" + dir + "' is " +
                                      (path == "/" ? "the root directory" : "a system directory") +
                                      "; give a directory of its own for ratelab's files");
  }
  if (!fs::exists(path, ec)) return OutputDir(path.string(), {}, {});
  if (!fs::is_directory(path, ec)) {
    return absl::InvalidArgumentError(option + ": '" + dir + "' is a file, not a directory");
  }
  // ratelab writes its files in the directory itself, never through a link to somewhere else:
  // not with --force either (a `plots` link to another folder had its files overwritten).
  for (const char* name : {kManifestName, "report.json", "report.html", "report.md", "junit.xml",
                           "result.json", "plots"}) {
    const fs::path at = path / name;
    const bool plots = std::string_view(name) == "plots";
    std::vector<fs::path> links;
    if (fs::is_symlink(at, ec)) links.push_back(at);
    if (plots && links.empty() && fs::is_directory(at, ec)) {
      for (const fs::directory_entry& e : fs::directory_iterator(at, ec)) {
        if (e.is_symlink(ec)) links.push_back(e.path());
      }
    }
    if (!links.empty()) {
      return absl::InvalidArgumentError(
          option + ": '" + links.front().string() +
          "' is a symbolic link where ratelab writes a file of its own; remove it, or give "
          "another directory (ratelab never writes through a link, --force or not)");
    }
  }
  const bool has_manifest = fs::exists(path / kManifestName, ec);
  const std::set<std::string> manifest = ReadManifest(path);
  std::set<std::string> ours, theirs;
  for (const std::string& rel : FilesUnder(path, ec)) {
    const bool link = fs::is_symlink(path / rel, ec);  // never one of ratelab's
    (!link && (has_manifest ? manifest.contains(rel) : LooksLikeOurs(rel))) ? ours.insert(rel)
                                                                            : theirs.insert(rel);
  }
  if (ec) return absl::InvalidArgumentError(option + ": cannot read " + dir + ": " + ec.message());
  if (!theirs.empty() && !force) {
    return absl::InvalidArgumentError(
        option + ": '" + dir + "' holds " + std::to_string(theirs.size()) +
        " file(s) ratelab did not write (such as " + *theirs.begin() +
        "); give an empty or new directory, or --force to write beside them");
  }
  return OutputDir(path.string(), std::move(ours), std::move(theirs));
}

Status OutputDir::Clear() const {
  std::error_code ec;
  fs::create_directories(dir_, ec);
  if (ec) return absl::InternalError("cannot create " + dir_ + ": " + ec.message());
  for (const std::string& rel : stale_) {
    fs::remove(fs::path(dir_) / rel, ec);
    if (ec) return absl::InternalError("cannot remove " + dir_ + "/" + rel + ": " + ec.message());
  }
  fs::remove(fs::path(dir_) / kManifestName, ec);
  return absl::OkStatus();
}

Status OutputDir::Record() const {
  std::error_code ec;
  std::ofstream out(fs::path(dir_) / kManifestName);
  for (const std::string& rel : FilesUnder(dir_, ec)) {
    if (!kept_.contains(rel)) out << rel << "\n";
  }
  if (ec || !out.flush()) return absl::InternalError("cannot write " + dir_ + "/" + kManifestName);
  return absl::OkStatus();
}

Result<std::string> OutputDir::Write(const std::string& name, const std::string& text) const {
  const std::string path = (fs::path(dir_) / name).string();
  std::ofstream f(path);
  if (!(f << text) || !f.flush()) return absl::InternalError("cannot write " + path);
  return path;
}

Result<std::string> OutputDir::WriteAll(
    std::span<const std::pair<const char*, std::string>> files) const {
  if (Status s = Clear(); !s.ok()) return s;
  std::string first;
  for (const auto& [name, text] : files) {
    Result<std::string> path = Write(name, text);
    if (!path.ok()) return path.status();
    if (first.empty()) first = *path;
  }
  if (Status s = Record(); !s.ok()) return s;
  return first;
}

}  // namespace ratelab
