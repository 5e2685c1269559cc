#include "impl/core/input_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "impl/core/text.h"

namespace ratelab {

std::string ByteCount(size_t bytes) {
  if (bytes >= (1 << 20) && bytes % (1 << 20) == 0) return std::to_string(bytes >> 20) + " MiB";
  if (bytes >= (1 << 10) && bytes % (1 << 10) == 0) return std::to_string(bytes >> 10) + " KiB";
  return std::to_string(bytes) + " bytes";
}

Result<std::string> ReadInputFile(const std::string& path, const InputFileKind& kind) {
  const std::string what(kind.what);
  // O_NONBLOCK: opening a FIFO with no writer must not wait; a regular file ignores it.
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    // Why, unless it is simply not there.
    return absl::NotFoundError(
        path + ": cannot open " + what +
        (errno == ENOENT ? "" : " (" + std::string(std::strerror(errno)) + ")"));
  }
  struct Closer {
    int fd;
    ~Closer() { close(fd); }
  } closer{fd};
  struct stat st {};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    const char* kind_of = S_ISDIR(st.st_mode)                          ? "a directory"
                          : S_ISFIFO(st.st_mode)                       ? "a pipe"
                          : S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode) ? "a device"
                                                                       : "not a regular file";
    return absl::InvalidArgumentError(path + ": " + what + " is " + kind_of +
                                      ", not a regular file");
  }
  const auto too_large = [&] {
    return absl::InvalidArgumentError(path + ": " + what + " is larger than " +
                                      ByteCount(kind.max_bytes) + ", the most ratelab reads");
  };
  if (static_cast<uint64_t>(st.st_size) > kind.max_bytes) return too_large();
  std::string bytes;
  bytes.reserve(static_cast<size_t>(st.st_size));
  char chunk[1 << 16];
  while (true) {
    const ssize_t n = read(fd, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      return absl::InvalidArgumentError(path + ": cannot read " + what + " (" +
                                        std::strerror(errno) + ")");
    }
    if (n == 0) break;
    if (bytes.size() + static_cast<size_t>(n) > kind.max_bytes) return too_large();
    bytes.append(chunk, static_cast<size_t>(n));
  }
  if (kind.text) {
    if (const std::optional<size_t> bad = FirstNonUtf8(bytes)) {
      const TextPlace at = PlaceOf(bytes, *bad);
      return absl::InvalidArgumentError(path + ":" + std::to_string(at.line) + ":" +
                                        std::to_string(at.column) + ": " + what +
                                        " is not UTF-8 text");
    }
  }
  return bytes;
}

}  // namespace ratelab
