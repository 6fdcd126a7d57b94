// FileStateStore (declared in state_store.h): the file half of the SecOC
// state store, in the secoc_io library; the format lives in state_store.cc.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "layersec/base/keyfile.h"
#include "layersec/secoc/state_store.h"

namespace layersec::secoc {

Status<StoreError> FileStateStore::fail(StoreError e, const std::string& why) {
  last_error_ = path_ + ": " + why;
  return Err(e);
}

Result<PersistedState, StoreError> FileStateStore::load() {
  // The state file is checked like a key file (base/keyfile.h): O_NOFOLLOW,
  // a regular file, no group/other permission bits, ours or root's, in
  // directories only root or we can write, at most 64 KiB.
  std::string detail;
  auto bytes = read_secret_file(path_, &detail);
  if (!bytes) {
    last_error_ = key_file_message(path_, bytes.error(), detail);
    if (bytes.error() == KeyFileError::kNotFound) {
      last_error_ = path_ + ": missing";
      return Err(StoreError::kMissing);
    }
    return Err(StoreError::kIo);
  }
  const std::string text(reinterpret_cast<const char*>(bytes->data()), bytes->size());
  auto parsed = parse_state(text);
  if (!parsed) last_error_ = path_ + ": corrupt (not a layersec SecOC state file, or truncated)";
  return parsed;
}

Status<StoreError> FileStateStore::save(const PersistedState& state) {
  const std::string text = serialize_state(state);
  std::string dir = ".";
  std::string base = path_;
  if (const auto slash = path_.rfind('/'); slash != std::string::npos) {
    dir = slash == 0 ? "/" : path_.substr(0, slash);
    base = path_.substr(slash + 1);
  }
  std::string tmp = (dir == "." && path_.find('/') == std::string::npos ? std::string() : dir + "/") +
                    "." + base + ".tmp.XXXXXX";
  // mkostemp: O_CREAT|O_EXCL with a random name and mode 0600; never follows
  // an existing name.
  const int fd = ::mkostemp(tmp.data(), O_CLOEXEC);
  if (fd < 0) return fail(StoreError::kIo, std::string("cannot create a temp file: ") + std::strerror(errno));
  std::size_t off = 0;
  while (off < text.size()) {
    const ssize_t n = ::write(fd, text.data() + off, text.size() - off);
    if (n < 0) {
      if (errno == EINTR) continue;
      const int e = errno;
      ::close(fd);
      ::unlink(tmp.c_str());
      return fail(StoreError::kIo, std::string("write failed: ") + std::strerror(e));
    }
    off += static_cast<std::size_t>(n);
  }
  if (::fsync(fd) != 0) {
    const int e = errno;
    ::close(fd);
    ::unlink(tmp.c_str());
    return fail(StoreError::kIo, std::string("fsync failed: ") + std::strerror(e));
  }
  if (::close(fd) != 0) {
    const int e = errno;
    ::unlink(tmp.c_str());
    return fail(StoreError::kIo, std::string("close failed: ") + std::strerror(e));
  }
  // rename() replaces the name itself: a symlink planted at path_ is
  // replaced, never followed.
  if (::rename(tmp.c_str(), path_.c_str()) != 0) {
    const int e = errno;
    ::unlink(tmp.c_str());
    return fail(StoreError::kIo, std::string("rename failed: ") + std::strerror(e));
  }
  // Make the rename itself durable.
  const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0) return fail(StoreError::kIo, std::string("cannot open the directory: ") + std::strerror(errno));
  const int rc = ::fsync(dfd);
  ::close(dfd);
  if (rc != 0) return fail(StoreError::kIo, std::string("directory fsync failed: ") + std::strerror(errno));
  return {};
}

}  // namespace layersec::secoc
